//! Name resolution never panics, whatever the input, and what it accepts is well formed.

use kairos::graph::{NameKind, normalize_namespace, resolve, validate_node_name};
use proptest::prelude::*;

fn well_formed(name: &str) -> bool {
    name.starts_with('/')
        && name[1..].split('/').all(|token| {
            token.chars().next().is_some_and(|c| !c.is_ascii_digit())
                && token.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

proptest! {
    #[test]
    fn resolution_accepts_only_well_formed_names(
        name in "[a-z0-9_/~ .-]{0,12}",
        namespace in "[a-z0-9_/]{0,8}",
        node in "[a-z0-9_]{0,6}",
    ) {
        let (Ok(()), Ok(namespace)) = (validate_node_name(&node), normalize_namespace(&namespace)) else {
            return Ok(());
        };
        if let Ok(resolved) = resolve(NameKind::Topic, &name, &namespace, &node) {
            prop_assert!(well_formed(&resolved), "{name:?} in {namespace:?} resolved to {resolved:?}");
        }
    }

    #[test]
    fn arbitrary_input_is_an_error_not_a_panic(name in any::<String>(), namespace in any::<String>()) {
        let _ = normalize_namespace(&namespace);
        let _ = validate_node_name(&name);
        let _ = resolve(NameKind::Service, &name, "/", "n");
    }
}
