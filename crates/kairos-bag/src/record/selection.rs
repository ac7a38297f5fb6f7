//! Which topics and services a recording takes, as `ros2 bag record` chooses them: by
//! list, type, all, regex; left out by list, type and exclude regex; hidden topics only
//! when asked; a service through its introspection topic, chosen by the service options
//! only.

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
    /// Topics of these types (`--topic-types`, e.g. `sensor_msgs/msg/Image`).
    pub topic_types: Vec<String>,
    /// Not these topics, unless named (`--exclude-topics`).
    pub exclude_topics: Vec<String>,
    /// Not topics of these types, unless named (`--exclude-topic-types`).
    pub exclude_topic_types: Vec<String>,
    /// Not these services' events (`--exclude-services`, service names).
    pub exclude_services: Vec<String>,
}

impl Selection {
    /// Whether `topic`, of `ros_type` when it has a ROS 2 type, is to be recorded. A topic
    /// or service named in the lists is, whatever excludes it.
    pub fn wants(&self, topic: &str, ros_type: Option<&str>) -> bool {
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
            let left_out = self.exclude_services.iter().any(|s| s == service);
            return chosen && !left_out && !excluded(service) && !excluded(topic);
        }
        let hidden = topic.split('/').any(|part| part.starts_with('_'));
        if hidden && !self.include_hidden {
            return false;
        }
        let of_type = |types: &[String]| ros_type.is_some_and(|t| types.iter().any(|x| x == t));
        let chosen = self.all
            || of_type(&self.topic_types)
            || self.regex.as_ref().is_some_and(|r| r.is_match(topic));
        let left_out =
            self.exclude_topics.iter().any(|t| t == topic) || of_type(&self.exclude_topic_types);
        chosen && !left_out && !excluded(topic)
    }

    /// Whether nothing can ever be chosen.
    pub fn is_empty(&self) -> bool {
        !self.all
            && self.topics.is_empty()
            && self.topic_types.is_empty()
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
        assert!(all.wants("/chatter", None));
        assert!(!all.wants("/camera/image", None));
        assert!(
            !all.wants("/add/_service_event", None),
            "a service's events are chosen as a service"
        );
        let hidden = Selection {
            all: true,
            include_hidden: true,
            ..Selection::default()
        };
        assert!(hidden.wants("/_internal", None) && !hidden.wants("/add/_service_event", None));
        let services = Selection {
            all_services: true,
            exclude: Some(Regex::new("^/secret").unwrap()),
            ..Selection::default()
        };
        assert!(services.wants("/add/_service_event", None) && !services.wants("/chatter", None));
        assert!(
            !services.wants("/secret/_service_event", None),
            "excluded by name"
        );
        let by_topic = Selection {
            all_services: true,
            exclude: Some(Regex::new("_service_event$").unwrap()),
            ..Selection::default()
        };
        assert!(
            !by_topic.wants("/add/_service_event", None),
            "or by its topic's name"
        );
        let one = Selection {
            services: vec!["/add".into()],
            ..Selection::default()
        };
        assert!(one.wants("/add/_service_event", None) && !one.wants("/sub/_service_event", None));
        assert!(!one.is_empty() && !services.is_empty());
        let listed = Selection {
            topics: vec!["/add/_service_event".into()],
            ..Selection::default()
        };
        assert!(
            listed.wants("/add/_service_event", None),
            "a named topic is recorded"
        );
        assert!(!listed.wants("/chatter", None));
        let regex = Selection {
            regex: Some(Regex::new("^/r").unwrap()),
            ..Selection::default()
        };
        assert!(regex.wants("/rosout", None) && !regex.wants("/chatter", None));
        assert!(Selection::default().is_empty());
    }

    /// rosbag2's `TopicFilter::take_topic`: by type, and left out by name or type.
    #[test]
    fn types_choose_and_lists_leave_out_as_rosbag2s_filter_does() {
        const IMAGE: Option<&str> = Some("sensor_msgs/msg/Image");
        const STRING: Option<&str> = Some("std_msgs/msg/String");
        let by_type = Selection {
            topic_types: vec!["sensor_msgs/msg/Image".into()],
            ..Selection::default()
        };
        assert!(!by_type.is_empty());
        assert!(by_type.wants("/camera", IMAGE) && !by_type.wants("/chatter", STRING));
        assert!(
            !by_type.wants("/unknown", None),
            "a type it cannot read is not chosen"
        );
        let all_but = Selection {
            all: true,
            all_services: true,
            exclude_topics: vec!["/camera".into()],
            exclude_topic_types: vec!["std_msgs/msg/String".into()],
            exclude_services: vec!["/add".into()],
            ..Selection::default()
        };
        assert!(!all_but.wants("/camera", IMAGE) && all_but.wants("/depth", IMAGE));
        assert!(!all_but.wants("/chatter", STRING));
        assert!(!all_but.wants("/add/_service_event", None));
        assert!(all_but.wants("/mul/_service_event", None));
        let named = Selection {
            topics: vec!["/chatter".into()],
            exclude_topic_types: vec!["std_msgs/msg/String".into()],
            ..Selection::default()
        };
        assert!(named.wants("/chatter", STRING), "a named topic is recorded");
    }
}
