//! Which topics and services a recording takes, as `ros2 bag record` chooses them: by
//! list, all, regex and exclude regex; hidden topics only when asked; a service through
//! its introspection topic, chosen by the service options only.

use kairos_interface::service_event::SERVICE_EVENT_SUFFIX;
use regex::Regex;

/// Which topics and services to record, as `ros2 bag record` selects them. A service is
/// recorded through its introspection events, the topic `<service>/_service_event` (see
/// `kairos::graph::IntrospectionState`): chosen by the service options (or by naming the
/// topic), never by the topic options, as rosbag2 does.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Every topic (`--all-topics`; `-a` is this and `all_services`).
    pub all: bool,
    /// These topics (absolute names).
    pub topics: Vec<String>,
    /// Topics, and services, whose name matches (`--regex`).
    pub regex: Option<Regex>,
    /// Not these topics or services (by the service's name or its event topic's), even if
    /// chosen otherwise (`--exclude-regex`).
    pub exclude: Option<Regex>,
    /// Topics with a name part starting with `_` (`--include-hidden-topics`), which
    /// `all` and `regex` skip otherwise.
    pub include_hidden: bool,
    /// Every service's events (`--all-services`).
    pub all_services: bool,
    /// These services' events (`--services`, absolute names).
    pub services: Vec<String>,
}

impl Selection {
    /// Whether `topic` is to be recorded.
    pub fn wants(&self, topic: &str) -> bool {
        if self.topics.iter().any(|t| t == topic) {
            return true;
        }
        let excluded = |name: &str| self.exclude.as_ref().is_some_and(|r| r.is_match(name));
        if let Some(service) = topic.strip_suffix(SERVICE_EVENT_SUFFIX) {
            if self.services.iter().any(|s| s == service) {
                return true;
            }
            let chosen =
                self.all_services || self.regex.as_ref().is_some_and(|r| r.is_match(service));
            return chosen && !excluded(service) && !excluded(topic);
        }
        let hidden = topic.split('/').any(|part| part.starts_with('_'));
        if hidden && !self.include_hidden {
            return false;
        }
        let chosen = self.all || self.regex.as_ref().is_some_and(|r| r.is_match(topic));
        chosen && !excluded(topic)
    }

    /// Whether nothing can ever be chosen.
    pub fn is_empty(&self) -> bool {
        !self.all
            && self.topics.is_empty()
            && self.regex.is_none()
            && !self.all_services
            && self.services.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_follows_ros2_bag_record() {
        let all = Selection {
            all: true,
            exclude: Some(Regex::new("^/camera").unwrap()),
            ..Selection::default()
        };
        assert!(all.wants("/chatter"));
        assert!(!all.wants("/camera/image"));
        assert!(
            !all.wants("/add/_service_event"),
            "a service's events are chosen as a service"
        );
        let hidden = Selection {
            all: true,
            include_hidden: true,
            ..Selection::default()
        };
        assert!(hidden.wants("/_internal") && !hidden.wants("/add/_service_event"));
        let services = Selection {
            all_services: true,
            exclude: Some(Regex::new("^/secret").unwrap()),
            ..Selection::default()
        };
        assert!(services.wants("/add/_service_event") && !services.wants("/chatter"));
        assert!(
            !services.wants("/secret/_service_event"),
            "excluded by name"
        );
        let by_topic = Selection {
            all_services: true,
            exclude: Some(Regex::new("_service_event$").unwrap()),
            ..Selection::default()
        };
        assert!(
            !by_topic.wants("/add/_service_event"),
            "or by its topic's name"
        );
        let one = Selection {
            services: vec!["/add".into()],
            ..Selection::default()
        };
        assert!(one.wants("/add/_service_event") && !one.wants("/sub/_service_event"));
        assert!(!one.is_empty() && !services.is_empty());
        let listed = Selection {
            topics: vec!["/add/_service_event".into()],
            ..Selection::default()
        };
        assert!(
            listed.wants("/add/_service_event"),
            "a named topic is recorded"
        );
        assert!(!listed.wants("/chatter"));
        let regex = Selection {
            regex: Some(Regex::new("^/r").unwrap()),
            ..Selection::default()
        };
        assert!(regex.wants("/rosout") && !regex.wants("/chatter"));
        assert!(Selection::default().is_empty());
    }
}
