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
        // Whatever is accepted is well formed; whatever is refused says why.
        match normalize_namespace(&namespace) {
            Ok(normalized) => prop_assert!(
                normalized == "/" || well_formed(&normalized),
                "{namespace:?} normalized to {normalized:?}"
            ),
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
        match validate_node_name(&name) {
            Ok(()) => prop_assert!(well_formed(&format!("/{name}")), "node name {name:?} accepted"),
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
        match resolve(NameKind::Service, &name, "/", "n") {
            Ok(resolved) => prop_assert!(well_formed(&resolved), "{name:?} resolved to {resolved:?}"),
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }
}
