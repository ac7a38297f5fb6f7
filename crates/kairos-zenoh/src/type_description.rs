//! ROS 2's type description service (REP 2011), so tools and nodes in other processes can
//! learn the types a kairos process uses, users' own included, without their sources.
//!
//! What this module promises:
//! - [`serve`] creates on a node the service rcl creates for every node:
//!   `<node>/get_type_description`, `type_description_interfaces/srv/GetTypeDescription`;
//! - it answers for every type the node's transport carries to other processes (the
//!   messages of its publishers and subscriptions, the services of its servers and
//!   clients), remembered as they are declared ([`TypeRegistry`]);
//! - the description it sends is the one the hash is computed from: the requester can
//!   hash it again and get the requested hash (`default_value`s are empty: kairos keeps
//!   none at run time, and they do not enter the hash);
//! - a type the process does not carry, or a hash that is not its type's, is answered with
//!   `successful: false` and the reason, never an error or a panic. Type sources are not
//!   kept (the types are compiled in), so `type_sources` is empty and
//!   `extra_information` says so.

use kairos::graph::{GraphError, Node, Service};
use kairos_msgs::type_description_interfaces::msg as td;
use kairos_msgs::type_description_interfaces::srv::{
    GetTypeDescriptionRequest, GetTypeDescriptionResponse,
};
use kairos_msgs::{TypeDescription, type_hash::Field};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The types a transport carries, by ROS type name.
#[derive(Debug, Default)]
pub struct TypeRegistry(Mutex<BTreeMap<String, TypeDescription>>);

impl TypeRegistry {
    /// Remembers `description` (a message or a service type).
    pub fn remember(&self, description: TypeDescription) {
        let mut types = self.0.lock();
        if !types.contains_key(&description.type_name) {
            types.insert(description.type_name.clone(), description);
        }
    }

    /// The description of `type_name`, if carried.
    pub fn get(&self, type_name: &str) -> Option<TypeDescription> {
        self.0.lock().get(type_name).cloned()
    }

    /// The answer to `request`.
    pub fn answer(&self, request: &GetTypeDescriptionRequest) -> GetTypeDescriptionResponse {
        let failure = |reason: String| GetTypeDescriptionResponse {
            successful: false,
            failure_reason: reason,
            ..Default::default()
        };
        let Some(description) = self.get(&request.type_name) else {
            return failure(format!(
                "this process carries no type '{}' across processes",
                request.type_name
            ));
        };
        let hash = description.hash().to_string();
        if !request.type_hash.is_empty() && request.type_hash != hash {
            return failure(format!(
                "'{}' here is {hash}, not {}",
                request.type_name, request.type_hash
            ));
        }
        GetTypeDescriptionResponse {
            successful: true,
            failure_reason: String::new(),
            type_description: to_message(&description),
            type_sources: Vec::new(),
            extra_information: if request.include_type_sources {
                vec![td::KeyValue {
                    key: "type_sources".into(),
                    value: "not kept: kairos types are compiled in".into(),
                }]
            } else {
                Vec::new()
            },
        }
    }
}

/// `description` as `type_description_interfaces/msg/TypeDescription`: the type, then
/// every type it refers to, sorted by name (as rosidl lists them for the hash).
pub fn to_message(description: &TypeDescription) -> td::TypeDescription {
    let mut referenced = BTreeMap::new();
    let mut stack = vec![description];
    while let Some(next) = stack.pop() {
        for nested in next.fields.iter().filter_map(|f| f.nested.as_ref()) {
            if !referenced.contains_key(nested.type_name.as_str()) {
                referenced.insert(nested.type_name.as_str(), nested);
                stack.push(nested);
            }
        }
    }
    td::TypeDescription {
        type_description: individual(description),
        referenced_type_descriptions: referenced.values().map(|d| individual(d)).collect(),
    }
}

fn individual(description: &TypeDescription) -> td::IndividualTypeDescription {
    td::IndividualTypeDescription {
        type_name: description.type_name.clone(),
        fields: description.fields.iter().map(field).collect(),
    }
}

fn field(field: &Field) -> td::Field {
    td::Field {
        name: field.name.clone(),
        r#type: td::FieldType {
            type_id: field.type_id,
            capacity: field.capacity,
            string_capacity: field.string_capacity,
            nested_type_name: field
                .nested
                .as_ref()
                .map(|n| n.type_name.clone())
                .unwrap_or_default(),
        },
        default_value: String::new(),
    }
}

/// A description received from `get_type_description`, back in kairos's form (so its
/// hash can be checked, or its fields read).
pub fn from_message(message: &td::TypeDescription) -> Option<TypeDescription> {
    let known: BTreeMap<&str, &td::IndividualTypeDescription> = message
        .referenced_type_descriptions
        .iter()
        .map(|d| (d.type_name.as_str(), d))
        .collect();
    build(&message.type_description, &known, 0)
}

fn build(
    individual: &td::IndividualTypeDescription,
    known: &BTreeMap<&str, &td::IndividualTypeDescription>,
    depth: usize,
) -> Option<TypeDescription> {
    // A cycle (or a description nested absurdly deep) is not a ROS type.
    if depth > 64 {
        return None;
    }
    let mut fields = Vec::with_capacity(individual.fields.len());
    for f in &individual.fields {
        let t = &f.r#type;
        let nested = if t.nested_type_name.is_empty() {
            None
        } else {
            Some(build(
                known.get(t.nested_type_name.as_str())?,
                known,
                depth + 1,
            )?)
        };
        fields.push(Field {
            name: f.name.clone(),
            type_id: t.type_id,
            capacity: t.capacity,
            string_capacity: t.string_capacity,
            nested,
        });
    }
    Some(TypeDescription::new(&individual.type_name, fields))
}

/// The type description service of one node; dropping it withdraws it.
pub struct TypeDescriptionService {
    _service: Service<GetTypeDescriptionRequest, GetTypeDescriptionResponse>,
}

impl std::fmt::Debug for TypeDescriptionService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypeDescriptionService").finish()
    }
}

/// Serves `<node>/get_type_description` on `node`, answering from `types` (the registry
/// of the transport that carries the node: [`crate::ZenohTransport::types`]).
pub fn serve(node: &Node, types: Arc<TypeRegistry>) -> Result<TypeDescriptionService, GraphError> {
    let service = node.create_service(
        "~/get_type_description",
        move |request: GetTypeDescriptionRequest| types.answer(&request),
    )?;
    Ok(TypeDescriptionService { _service: service })
}
