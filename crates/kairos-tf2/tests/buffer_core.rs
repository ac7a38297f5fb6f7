//! The facts of tf2's buffer tests, case for case: `tf2/test/simple_tf2_core.cpp`,
//! `test_tf2/test/buffer_core_test.cpp` (its live tests, and the still-valid facts of its
//! commented-out tf1 tests: exceptions, latest common time, canTransform and the advanced
//! API), with the expected numbers as tf2 states them. Each test names what it promises;
//! its doc line names the tf2 case.
//!
//! One file, as long as tf2's two: a case here is found by the name of the case it ports,
//! in the order tf2 has them.

use kairos_tf2::{
    BufferCore, Extrapolation, FrameRole, Invalid, MAX_GRAPH_DEPTH, Quaternion, Stamp, Tf2Error,
    Transform, TransformStamped, Vector3,
};
use std::f64::consts::{FRAC_1_SQRT_2, PI};
use std::time::Duration;

const EPS: f64 = 1e-6;
const SECOND: i64 = 1_000_000_000;

fn secs(s: i64) -> Stamp {
    Stamp::from_secs(s)
}

fn ns(n: i64) -> Stamp {
    Stamp::from_nanos(n)
}

fn link(parent: &str, child: &str, stamp: Stamp, x: f64, y: f64) -> TransformStamped {
    TransformStamped::new(
        parent,
        child,
        stamp,
        Transform::new(Vector3::new(x, y, 0.0), Quaternion::IDENTITY),
    )
}

fn identity(parent: &str, child: &str, stamp: Stamp) -> TransformStamped {
    link(parent, child, stamp, 0.0, 0.0)
}

fn set(buffer: &mut BufferCore, t: &TransformStamped) {
    buffer.set_transform(t, "authority", false).unwrap();
}

// ---------------------------------------------------------------------------------------
// setTransform: what is refused (simple_tf2_core.cpp, buffer_core_test.cpp)
// ---------------------------------------------------------------------------------------

fn invalid(result: Result<(), Tf2Error>) -> Invalid {
    match result {
        Err(Tf2Error::InvalidArgument { what }) => what,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

/// tf2 `setTransformFail`, `setTransformValid`.
#[test]
fn a_transform_without_frame_ids_is_refused_and_a_complete_one_stored() {
    let mut buffer = BufferCore::new();
    let empty = TransformStamped::default();
    assert!(matches!(
        invalid(buffer.set_transform(&empty, "authority1", false)),
        Invalid::EmptyFrameId { .. }
    ));
    let valid = identity("foo", "child", secs(1));
    assert_eq!(buffer.set_transform(&valid, "authority1", false), Ok(()));
}

/// tf2 `setTransformInvalidQuaternion`, and tf `assertQuaternionValid`'s cases.
#[test]
fn a_rotation_off_unit_norm_by_the_tolerance_is_refused() {
    let mut buffer = BufferCore::new();
    let with = |q: Quaternion| {
        TransformStamped::new("foo", "child", secs(1), Transform::new(Vector3::ZERO, q))
    };
    let err = buffer
        .set_transform(
            &with(Quaternion::new(0.0, 0.0, 0.0, 0.0)),
            "authority1",
            false,
        )
        .unwrap_err();
    assert!(matches!(
        err,
        Tf2Error::InvalidArgument {
            what: Invalid::DenormalizedQuaternion { .. }
        }
    ));
    assert!(err.to_string().contains("'authority1'"), "{err}");
    let h = FRAC_1_SQRT_2;
    let valid = [
        (1.0, 0.0, 0.0, 0.0),
        (0.0, 1.0, 0.0, 0.0),
        (0.0, 0.0, 1.0, 0.0),
        (0.0, 0.0, 0.0, 1.0),
        (0.0, 0.0, h, h),
    ];
    let refused = [
        (0.0, 0.0, 0.0, 0.0),
        (0.0, 1.0, 1.0, 0.0),
        (0.0, 0.0, 1.0, 1.0),
        (0.0, 0.0, h, 1.0),
        (0.0, 0.0, h + 0.01, h),
        (0.0, 0.0, h - 0.01, h),
    ];
    for (x, y, z, w) in valid {
        let q = Quaternion::new(x, y, z, w);
        assert_eq!(buffer.set_transform(&with(q), "a", false), Ok(()), "{q:?}");
    }
    for (x, y, z, w) in refused {
        let q = Quaternion::new(x, y, z, w);
        assert!(
            matches!(
                invalid(buffer.set_transform(&with(q), "a", false)),
                Invalid::DenormalizedQuaternion { .. }
            ),
            "{q:?}"
        );
    }
}

/// tf2 `BufferCore_setTransform.NoInsertOnSelfTransform`.
#[test]
fn a_frame_cannot_be_its_own_parent() {
    let mut buffer = BufferCore::new();
    let t = identity("same_frame", "same_frame", secs(10));
    let what = invalid(buffer.set_transform(&t, "authority", false));
    assert_eq!(
        what,
        Invalid::SelfTransform {
            frame: "same_frame".into(),
            authority: "authority".into()
        }
    );
}

/// tf2 `BufferCore_setTransform.NoInsertWithNan`.
#[test]
fn a_nan_anywhere_is_refused_after_a_valid_insert_and_so_is_infinity() {
    let mut buffer = BufferCore::new();
    let mut t = identity("same_frame", "other_frame", secs(10));
    assert_eq!(buffer.set_transform(&t, "authority", false), Ok(()));
    t.transform.translation.x = f64::NAN;
    let err = buffer.set_transform(&t, "authority", false).unwrap_err();
    assert!(matches!(
        err,
        Tf2Error::InvalidArgument {
            what: Invalid::NotFinite { .. }
        }
    ));
    assert!(err.to_string().contains("not finite"), "{err}");
    let mut t = identity("same_frame", "other_frame", secs(11));
    t.transform.rotation.w = f64::NAN;
    assert!(matches!(
        invalid(buffer.set_transform(&t, "authority", false)),
        Invalid::NotFinite { .. }
    ));
    // Unlike tf2, an infinity too.
    let mut t = identity("same_frame", "other_frame", secs(12));
    t.transform.translation.y = f64::INFINITY;
    assert!(matches!(
        invalid(buffer.set_transform(&t, "authority", false)),
        Invalid::NotFinite { .. }
    ));
}

/// tf2 `BufferCore_setTransform.NoInsertWithNoFrameID`, `NoInsertWithNoParentID`.
#[test]
fn empty_frame_ids_are_refused_and_a_lone_slash_counts_as_empty() {
    let mut buffer = BufferCore::new();
    for child in ["", "/"] {
        let t = identity("same_frame", child, secs(10));
        assert_eq!(
            invalid(buffer.set_transform(&t, "authority", false)),
            Invalid::EmptyFrameId {
                role: FrameRole::Child,
                authority: "authority".into()
            }
        );
    }
    for parent in ["", "/"] {
        let t = identity(parent, "some_frame", secs(10));
        assert_eq!(
            invalid(buffer.set_transform(&t, "authority", false)),
            Invalid::EmptyFrameId {
                role: FrameRole::Parent,
                authority: "authority".into()
            }
        );
    }
    assert!(buffer.frame_names().is_empty(), "nothing refused is named");
}

// ---------------------------------------------------------------------------------------
// Lookups that fail (simple_tf2_core.cpp)
// ---------------------------------------------------------------------------------------

/// tf2 `tf2_lookupTransform.LookupException_Nothing_Exists`, `tf2_canTransform.Nothing_Exists`.
#[test]
fn looking_up_in_an_empty_buffer_is_a_lookup_error() {
    let buffer = BufferCore::new();
    let err = buffer.lookup_transform("a", "b", secs(1)).unwrap_err();
    assert_eq!(
        err,
        Tf2Error::Lookup {
            frame: "a".into(),
            role: FrameRole::Target,
            known: vec![]
        }
    );
    assert!(err.to_string().contains("holds no frames yet"), "{err}");
    assert!(!buffer.can_transform("a", "b", secs(1)));
}

/// tf2 `tf2_lookupTransform.LookupException_One_Exists`, `tf2_canTransform.One_Exists`.
#[test]
fn an_unknown_frame_is_a_lookup_error_listing_the_frames_that_exist() {
    let mut buffer = BufferCore::new();
    set(&mut buffer, &identity("foo", "child", secs(1)));
    let err = buffer.lookup_transform("foo", "bar", secs(1)).unwrap_err();
    assert_eq!(
        err,
        Tf2Error::Lookup {
            frame: "bar".into(),
            role: FrameRole::Source,
            known: vec!["child".into(), "foo".into()]
        }
    );
    assert!(
        err.to_string().contains("frames that exist: child, foo"),
        "{err}"
    );
    assert!(!buffer.can_transform("foo", "bar", secs(1)));
    assert_eq!(buffer.check_transform("foo", "bar", secs(1)), Err(err));
}

fn extrapolation(result: Result<TransformStamped, Tf2Error>) -> (Stamp, Extrapolation) {
    match result {
        Err(Tf2Error::Extrapolation {
            requested, kind, ..
        }) => (requested, kind),
        other => panic!("expected Extrapolation, got {other:?}"),
    }
}

/// tf2 `tf2_lookupTransform.TransformException_Backward_Forward`.
#[test]
fn one_value_then_past_and_future_extrapolation_are_told_apart() {
    let mut buffer = BufferCore::new();
    set(&mut buffer, &identity("foo", "bar", secs(2)));
    assert!(buffer.lookup_transform("foo", "bar", secs(2)).is_ok());
    assert_eq!(
        extrapolation(buffer.lookup_transform("foo", "bar", secs(4))),
        (secs(4), Extrapolation::OneValue { stamp: secs(2) })
    );

    set(&mut buffer, &identity("foo", "bar", secs(3)));
    let range = (secs(2), secs(3));
    assert_eq!(
        extrapolation(buffer.lookup_transform("foo", "bar", secs(1))),
        (
            secs(1),
            Extrapolation::Past {
                earliest: range.0,
                latest: range.1
            }
        )
    );
    let err = buffer.lookup_transform("foo", "bar", secs(4)).unwrap_err();
    assert!(matches!(
        err,
        Tf2Error::Extrapolation {
            kind: Extrapolation::Future { .. },
            ..
        }
    ));
    let text = err.to_string();
    assert!(
        text.contains("at 4 s") && text.contains("into the future"),
        "{text}"
    );
    assert!(
        text.contains("2 s to 3 s") && text.contains("Fix: "),
        "{text}"
    );
}

/// tf2 `tf2_clear.LookUp_Static_Transfrom_Succeed`.
#[test]
fn a_static_transform_answers_at_any_time() {
    let mut buffer = BufferCore::new();
    buffer.clear();
    let t = identity("foo", "bar", secs(1));
    buffer.set_transform(&t, "authority1", true).unwrap();
    let found = buffer.lookup_transform("foo", "bar", secs(2)).unwrap();
    assert_eq!(found.header.stamp, secs(2));
}

/// tf2 `tf2_clear.LookUp_Static_Transfrom_Fail`.
#[test]
fn a_frame_cleared_then_made_static_answers_at_any_time() {
    let mut buffer = BufferCore::new();
    let t = identity("foo", "bar", secs(1));
    buffer.set_transform(&t, "authority1", false).unwrap();
    buffer.clear();
    buffer.set_transform(&t, "authority1", true).unwrap();
    assert!(buffer.lookup_transform("foo", "bar", secs(2)).is_ok());
}

// ---------------------------------------------------------------------------------------
// The tree configurations of buffer_core_test.cpp
// ---------------------------------------------------------------------------------------

/// The links of a configuration: (parent, child, dx, dy).
fn links(mode: &str) -> Vec<(&'static str, &'static str, f64, f64)> {
    let i = vec![("a", "b", 1.0, 0.0), ("b", "c", 1.0, 0.0)];
    let y = vec![
        ("a", "b", 1.0, 0.0),
        ("b", "c", 1.0, 0.0),
        ("b", "d", 0.0, 1.0),
        ("d", "e", 0.0, 1.0),
    ];
    let v = vec![
        ("a", "b", 1.0, 0.0),
        ("b", "c", 1.0, 0.0),
        ("a", "f", 0.0, 1.0),
        ("f", "g", 0.0, 1.0),
    ];
    let one = vec![("1", "2", 1.0, 0.0)];
    match mode {
        "i" => i,
        "y" => y,
        "v" => v,
        "1" => one,
        "1_v" => [one, v].concat(),
        _ => unreachable!("no configuration {mode}"),
    }
}

/// tf2's `setupTree`: each link at `time - space/2` (or 0 if that is not positive) and,
/// with a space, again at `time`.
fn setup_tree(buffer: &mut BufferCore, mode: &str, time: Stamp, space: i64) {
    buffer.clear();
    for (parent, child, dx, dy) in links(mode) {
        let first = if time.nanos() > space / 2 {
            ns(time.nanos() - space / 2)
        } else {
            Stamp::LATEST
        };
        set(buffer, &link(parent, child, first, dx, dy));
        if space > 0 {
            set(buffer, &link(parent, child, time, dx, dy));
        }
    }
}

/// Where each frame's origin is in its tree's root (every link is a pure translation in
/// the plane): the tf2 tests' expected translations are the differences of these.
fn position(frame: &str) -> (f64, f64) {
    match frame {
        "a" | "1" => (0.0, 0.0),
        "b" | "2" => (1.0, 0.0),
        "c" => (2.0, 0.0),
        "d" => (1.0, 1.0),
        "e" => (1.0, 2.0),
        "f" => (0.0, 1.0),
        "g" => (0.0, 2.0),
        _ => unreachable!(),
    }
}

const TIMES: [i64; 3] = [SECOND, 10 * SECOND, 0];
const SPACES: [i64; 3] = [SECOND, SECOND / 1000, SECOND / 10];

/// Runs tf2's permutations of a configuration: every time, space (if `spaces`), target
/// and source, and checks each lookup against the positions.
fn check_configuration(mode: &str, frames: &[&str], spaces: &[i64]) {
    for time in TIMES.map(ns) {
        for &space in spaces {
            for &target in frames {
                for &source in frames {
                    let mut buffer = BufferCore::new();
                    setup_tree(&mut buffer, mode, time, space);
                    let out = buffer.lookup_transform(target, source, time).unwrap();
                    assert_eq!(out.header.stamp, time);
                    assert_eq!(out.header.frame_id, target);
                    assert_eq!(out.child_frame_id, source);
                    let (tx, ty) = position(target);
                    let (sx, sy) = position(source);
                    let t = out.transform;
                    let at = format!("{mode}: {source} in {target} at {time}, space {space}");
                    assert!((t.translation.x - (sx - tx)).abs() < EPS, "{at}: {t:?}");
                    assert!((t.translation.y - (sy - ty)).abs() < EPS, "{at}: {t:?}");
                    assert!(t.translation.z.abs() < EPS, "{at}");
                    let q = t.rotation;
                    assert!(
                        q.x.abs() < EPS && q.y.abs() < EPS && q.z.abs() < EPS,
                        "{at}"
                    );
                    assert!((q.w - 1.0).abs() < EPS, "{at}");
                }
            }
        }
    }
}

/// tf2 `BufferCore_lookupTransform.i_configuration`.
#[test]
fn a_chain_of_links_composes_in_both_directions() {
    check_configuration("i", &["a", "b", "c"], &SPACES);
}

/// tf2 `BufferCore_lookupTransform.one_link_configuration`.
#[test]
fn one_link_looks_up_forward_and_inverse() {
    check_configuration("1", &["1", "2"], &[0]);
}

/// tf2 `BufferCore_lookupTransform.v_configuration`.
#[test]
fn two_branches_from_the_root_join_through_it() {
    check_configuration("v", &["a", "b", "c", "f", "g"], &[0]);
}

/// tf2 `BufferCore_lookupTransform.y_configuration`.
#[test]
fn two_branches_below_the_root_join_at_their_common_parent() {
    check_configuration("y", &["a", "b", "c", "d", "e"], &[0]);
}

/// tf2 `BufferCore_lookupTransform.multi_configuration`.
#[test]
fn two_trees_answer_within_each_and_refuse_across() {
    let frames = ["1", "2", "a", "b", "c", "f", "g"];
    let tree = |f: &str| if f == "1" || f == "2" { 1 } else { 2 };
    for time in TIMES.map(ns) {
        for target in frames {
            for source in frames {
                let mut buffer = BufferCore::new();
                setup_tree(&mut buffer, "1_v", time, 0);
                let can = buffer.can_transform(target, source, time);
                assert_eq!(can, tree(target) == tree(source), "{source} in {target}");
                if can {
                    let t = buffer.lookup_transform(target, source, time).unwrap();
                    let (tx, ty) = position(target);
                    let (sx, sy) = position(source);
                    assert!((t.transform.translation.x - (sx - tx)).abs() < EPS);
                    assert!((t.transform.translation.y - (sy - ty)).abs() < EPS);
                } else {
                    let err = buffer.lookup_transform(target, source, time).unwrap_err();
                    assert!(matches!(err, Tf2Error::Connectivity { .. }), "{err:?}");
                }
            }
        }
    }
}

/// tf2's ring_45 setup: frames a..i, each the previous one's child, 45° apart on the unit
/// circle; plus the "inverse_" branch tf2 builds (its first link also names `b`, as the
/// child of `inverse_a`, at the same stamps: `a` wins as the later insert).
fn setup_ring_45(buffer: &mut BufferCore, time: Stamp, space: i64) {
    let frames = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for (prefix, direction) in [("inverse_", -1.0), ("", 1.0)] {
        for i in 1..frames.len() {
            let parent = format!("{prefix}{}", frames[i - 1]);
            let child = if i > 1 {
                format!("{prefix}{}", frames[i])
            } else {
                frames[i].to_owned()
            };
            let transform = Transform::new(
                Vector3::new(
                    direction * (FRAC_1_SQRT_2 - 1.0),
                    direction * FRAC_1_SQRT_2,
                    0.0,
                ),
                Quaternion::new(
                    0.0,
                    0.0,
                    (direction * PI / 8.0).sin(),
                    (direction * PI / 8.0).cos(),
                ),
            );
            let first = if time.nanos() > space / 2 {
                ns(time.nanos() - space / 2)
            } else {
                Stamp::LATEST
            };
            set(
                buffer,
                &TransformStamped::new(&parent, &child, first, transform),
            );
            if space > 0 {
                set(
                    buffer,
                    &TransformStamped::new(&parent, &child, time, transform),
                );
            }
        }
    }
}

/// tf2's expected (x, y, rotation z, rotation w) for the source `n` links below the target
/// (negative: above), in the sign tf2 returns.
fn ring_expected(n: i32) -> (f64, f64, f64, f64) {
    let r = FRAC_1_SQRT_2;
    let (s, c) = (|a: f64| a.sin(), |a: f64| a.cos());
    match n {
        1 => (r - 1.0, r, s(PI / 8.0), c(PI / 8.0)),
        -1 => (r - 1.0, -r, s(-PI / 8.0), c(-PI / 8.0)),
        2 => (-1.0, 1.0, s(PI / 4.0), c(PI / 4.0)),
        -2 => (-1.0, -1.0, s(-PI / 4.0), c(-PI / 4.0)),
        3 => (-1.0 - r, r, s(PI * 3.0 / 8.0), c(PI * 3.0 / 8.0)),
        -3 => (-1.0 - r, -r, -s(-PI * 3.0 / 8.0), -c(-PI * 3.0 / 8.0)),
        4 => (-2.0, 0.0, s(PI / 2.0), c(PI / 2.0)),
        -4 => (-2.0, 0.0, -s(-PI / 2.0), c(-PI / 2.0)),
        5 => (-1.0 - r, -r, s(PI * 5.0 / 8.0), c(PI * 5.0 / 8.0)),
        -5 => (-1.0 - r, r, -s(-PI * 5.0 / 8.0), -c(-PI * 5.0 / 8.0)),
        6 => (-1.0, -1.0, -s(PI * 6.0 / 8.0), -c(PI * 6.0 / 8.0)),
        -6 => (-1.0, 1.0, -s(-PI * 6.0 / 8.0), -c(-PI * 6.0 / 8.0)),
        7 => (r - 1.0, -r, s(-PI * 7.0 / 8.0), -c(-PI * 7.0 / 8.0)),
        -7 => (r - 1.0, r, s(PI * 7.0 / 8.0), -c(PI * 7.0 / 8.0)),
        _ => unreachable!(),
    }
}

/// tf2 `BufferCore_lookupTransform.ring_45_configuration`.
#[test]
fn a_ring_of_45_degree_links_composes_rotations_with_tf2s_signs() {
    let frames = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for time in TIMES.map(ns) {
        for space in SPACES {
            let mut buffer = BufferCore::new();
            setup_ring_45(&mut buffer, time, space);
            for (ti, target) in frames.iter().enumerate() {
                for (si, source) in frames.iter().enumerate() {
                    let out = buffer.lookup_transform(target, source, time).unwrap();
                    assert_eq!(out.header.stamp, time);
                    let (t, q) = (out.transform.translation, out.transform.rotation);
                    let at = format!("{source} in {target} at {time}, space {space}: {t:?} {q:?}");
                    assert!(
                        t.z.abs() < EPS && q.x.abs() < EPS && q.y.abs() < EPS,
                        "{at}"
                    );
                    let n = si as i32 - ti as i32;
                    if n == 0 || n.abs() == 8 {
                        // Zero distance, or all the way round.
                        assert!(t.x.abs() < EPS && t.y.abs() < EPS, "{at}");
                        assert!(q.z.abs() < EPS && (q.w.abs() - 1.0).abs() < EPS, "{at}");
                        continue;
                    }
                    let (x, y, z, w) = ring_expected(n);
                    assert!((t.x - x).abs() < EPS && (t.y - y).abs() < EPS, "{at}");
                    assert!((q.z - z).abs() < EPS && (q.w - w).abs() < EPS, "{at}");
                }
            }
        }
    }
}

/// tf2 `BufferCore_lookupTransform.invalid_arguments`.
#[test]
fn lookups_refuse_empty_frame_ids_and_leading_slashes() {
    let mut buffer = BufferCore::new();
    setup_tree(&mut buffer, "i", secs(1), 0);
    assert!(buffer.lookup_transform("b", "a", Stamp::LATEST).is_ok());
    let bad = [("", "a"), ("b", ""), ("/b", "a"), ("b", "/a")];
    for (target, source) in bad {
        let err = buffer
            .lookup_transform(target, source, Stamp::LATEST)
            .unwrap_err();
        assert!(
            matches!(err, Tf2Error::InvalidArgument { .. }),
            "{target:?} {source:?}: {err:?}"
        );
        assert!(err.to_string().contains("Fix: "));
    }
}

/// tf2 `BufferCore_canTransform.invalid_arguments`.
#[test]
fn can_transform_is_false_for_empty_frame_ids_and_leading_slashes() {
    let mut buffer = BufferCore::new();
    setup_tree(&mut buffer, "i", secs(1), 0);
    assert!(buffer.can_transform("b", "a", Stamp::LATEST));
    for (target, source) in [("", "a"), ("b", ""), ("/b", "a"), ("b", "/a")] {
        assert!(!buffer.can_transform(target, source, Stamp::LATEST));
        assert!(matches!(
            buffer.check_transform(target, source, Stamp::LATEST),
            Err(Tf2Error::InvalidArgument { .. })
        ));
    }
}

// ---------------------------------------------------------------------------------------
// The tf1-era cases buffer_core_test.cpp keeps commented out: still tf2's behaviour
// ---------------------------------------------------------------------------------------

/// tf `Exceptions`.
#[test]
fn interpolation_works_both_ways_and_extrapolation_fails_both_ways() {
    let mut buffer = BufferCore::new();
    assert!(!buffer.can_transform("parent", "me", ns(10_000_000)));
    assert!(matches!(
        buffer.lookup("parent", "me", ns(10_000_000)),
        Err(Tf2Error::Lookup { .. })
    ));
    set(&mut buffer, &identity("parent", "me", ns(100_000)));
    // One value: no extrapolation.
    assert!(!buffer.can_transform("parent", "me", ns(200_000)));
    set(&mut buffer, &identity("parent", "me", ns(300_000)));
    // Interpolating, inverse and forward.
    assert!(buffer.can_transform("parent", "me", ns(200_000)));
    assert!(buffer.can_transform("me", "parent", ns(200_000)));
    assert!(buffer.lookup("me", "parent", ns(200_000)).is_ok());
    // Backwards and forwards, both directions.
    for time in [ns(1_000), ns(350_000)] {
        assert!(!buffer.can_transform("parent", "me", time));
        assert!(!buffer.can_transform("me", "parent", time));
        assert!(matches!(
            buffer.lookup("me", "parent", time),
            Err(Tf2Error::Extrapolation { .. })
        ));
    }
}

/// tf `NoExtrapolationExceptionFromParent`.
#[test]
fn siblings_interpolate_without_needing_their_parents_parents() {
    let mut buffer = BufferCore::with_cache_length(Duration::from_millis(1));
    for stamp in [ns(1_000), ns(10_000)] {
        set(&mut buffer, &identity("parent", "a", stamp));
        set(&mut buffer, &identity("parent", "b", stamp));
    }
    set(
        &mut buffer,
        &identity("parent's parent", "parent", ns(1_000)),
    );
    set(
        &mut buffer,
        &identity("parent's parent's parent", "parent's parent", ns(1_000)),
    );
    set(
        &mut buffer,
        &identity("parent's parent", "parent", ns(10_000)),
    );
    set(
        &mut buffer,
        &identity("parent's parent's parent", "parent's parent", ns(10_000)),
    );
    let out = buffer.lookup("b", "a", ns(2_000)).unwrap();
    let p = out.transform.transform_point(Vector3::new(1.0, 1.0, 1.0));
    assert!((p - Vector3::new(1.0, 1.0, 1.0)).length() < EPS);
}

/// tf `ExtrapolationFromOneValue`.
#[test]
fn one_value_does_not_extrapolate_over_one_or_more_links() {
    let mut buffer = BufferCore::with_cache_length(Duration::from_millis(1));
    set(&mut buffer, &identity("parent", "a", ns(1_000)));
    set(
        &mut buffer,
        &identity("parent's parent", "parent", ns(1_000)),
    );
    for (target, time) in [
        ("parent", ns(10)),
        ("parent", ns(100_000)),
        ("parent's parent", ns(1)),
        ("parent's parent", ns(10_000)),
    ] {
        assert!(
            matches!(
                buffer.lookup(target, "a", time),
                Err(Tf2Error::Extrapolation {
                    kind: Extrapolation::OneValue { .. },
                    ..
                })
            ),
            "a in {target} at {time}"
        );
    }
    set(&mut buffer, &identity("parent", "a", ns(20_000)));
    assert!(buffer.lookup("parent", "a", ns(10_000)).is_ok());
}

/// tf `getLatestCommonTime`.
#[test]
fn latest_common_time_is_the_oldest_newest_stamp_on_the_path() {
    let mut buffer = BufferCore::new();
    set(&mut buffer, &identity("parent", "a", ns(1_000)));
    set(
        &mut buffer,
        &identity("parent's parent", "parent", ns(2_000)),
    );
    assert_eq!(
        buffer.latest_common_time("a", "parent's parent"),
        Ok(ns(1_000))
    );
    assert!(matches!(
        buffer.latest_common_time("a", "not valid"),
        Err(Tf2Error::Lookup { .. })
    ));

    set(&mut buffer, &identity("parent", "a", ns(3_000)));
    assert_eq!(
        buffer.latest_common_time("a", "parent's parent"),
        Ok(ns(2_000))
    );

    set(&mut buffer, &identity("parent", "b", ns(4_000)));
    set(&mut buffer, &identity("b", "c", ns(3_000)));
    set(&mut buffer, &identity("c", "d", ns(9_000)));
    set(&mut buffer, &identity("f", "e", ns(5_000)));
    for (x, y, expected) in [
        ("a", "b", 3_000), // shared parent
        ("a", "c", 3_000), // two degrees
        ("c", "a", 3_000),
        ("a", "d", 3_000), // three degrees
        ("d", "a", 3_000),
        ("e", "f", 5_000), // another tree
        ("f", "e", 5_000),
    ] {
        assert_eq!(buffer.latest_common_time(x, y), Ok(ns(expected)), "{x} {y}");
    }

    // The stamps lookups at LATEST resolve to.
    assert_eq!(
        buffer.lookup("parent", "b", Stamp::LATEST).unwrap().stamp,
        ns(4_000)
    );
    // (tf's case also transformed through `c` at LATEST; that needed tf1's extrapolation
    // limit, which tf2 does not have: `b` holds one value, at 4 us.)
    // Same frame: its newest stamp.
    assert_eq!(buffer.latest_common_time("a", "a"), Ok(ns(3_000)));
}

/// tf `RepeatedTimes`.
#[test]
fn two_transforms_at_one_stamp_give_a_finite_answer() {
    let mut buffer = BufferCore::new();
    for q in [
        Quaternion::from_rpy(0.0, 0.0, 1.0),
        Quaternion::from_rpy(0.0, 1.0, 1.0),
    ] {
        let t = TransformStamped::new("parent", "b", ns(4_000), Transform::new(Vector3::ZERO, q));
        set(&mut buffer, &t);
    }
    let out = buffer.lookup("parent", "b", ns(4_000)).unwrap();
    assert!(out.transform.is_finite());
    assert!(
        out.transform
            .rotation
            .angle_to(Quaternion::from_rpy(0.0, 1.0, 1.0))
            < EPS,
        "the later insert answers"
    );
}

/// tf `frameExists`, `getFrameStrings`.
#[test]
fn frames_exist_once_named_in_order_of_appearance_without_slashes() {
    let mut buffer = BufferCore::new();
    for frame in ["b", "parent", "other", "frame", "/b"] {
        assert!(!buffer.frame_exists(frame));
    }
    set(&mut buffer, &identity("/parent", "/b", ns(4_000)));
    assert!(buffer.frame_exists("b") && buffer.frame_exists("parent"));
    assert!(!buffer.frame_exists("/b") && !buffer.frame_exists("other"));
    assert_eq!(buffer.frame_names(), ["b", "parent"]);
    set(&mut buffer, &identity("/frame", "/other", ns(4_000)));
    assert_eq!(buffer.frame_names(), ["b", "parent", "other", "frame"]);
}

/// tf `canTransform` and `lookupTransform`, basic and advanced API: a two-link tree with
/// data from 10 s to 19 s.
#[test]
fn the_advanced_api_needs_data_only_where_each_leg_is_looked_up() {
    let mut buffer = BufferCore::new();
    let q = Quaternion::from_rpy(0.0, 0.0, 1.0);
    for i in 10..20 {
        for child in ["child", "other_child"] {
            let t =
                TransformStamped::new("parent", child, secs(i), Transform::new(Vector3::ZERO, q));
            set(&mut buffer, &t);
        }
    }
    let (zero, old, valid, future) = (Stamp::LATEST, secs(5), secs(15), secs(25));
    // Zero length: any frame, any time.
    for time in [zero, old, valid, future] {
        assert!(buffer.can_transform("some_frame", "some_frame", time));
        assert!(buffer.lookup("some_frame", "some_frame", time).is_ok());
        assert!(buffer.can_transform("child", "child", time));
    }
    // Basic API.
    for time in [valid, zero] {
        assert!(buffer.can_transform("child", "parent", time));
        assert!(buffer.can_transform("child", "other_child", time));
        assert!(buffer.lookup("child", "other_child", time).is_ok());
    }
    for time in [old, future] {
        assert!(!buffer.can_transform("child", "parent", time));
        assert!(!buffer.can_transform("child", "other_child", time));
        assert!(buffer.lookup("child", "parent", time).is_err());
    }
    // Source leg through fixed = target: only the source time matters.
    for target_time in [zero, old, valid, future] {
        for source in ["parent", "other_child"] {
            assert!(buffer.can_transform_full("child", target_time, source, valid, "child"));
            assert!(
                buffer
                    .lookup_full("child", target_time, source, valid, "child")
                    .is_ok()
            );
        }
    }
    for source_time in [old, future] {
        for source in ["parent", "other_child"] {
            assert!(!buffer.can_transform_full("child", valid, source, source_time, "child"));
            assert!(
                buffer
                    .lookup_full("child", valid, source, source_time, "child")
                    .is_err()
            );
        }
    }
    // Fixed = source: only the target time matters.
    assert!(buffer.can_transform_full("child", zero, "parent", valid, "parent"));
    assert!(buffer.can_transform_full("child", valid, "parent", valid, "parent"));
    assert!(!buffer.can_transform_full("child", old, "parent", valid, "parent"));
    assert!(!buffer.can_transform_full("child", future, "parent", valid, "parent"));
    for source_time in [zero, old, valid, future] {
        assert!(buffer.can_transform_full("child", valid, "parent", source_time, "parent"));
        assert!(
            buffer
                .lookup_full("child", valid, "parent", source_time, "parent")
                .is_ok()
        );
    }
}

// ---------------------------------------------------------------------------------------
// kairos' own promises on top of tf2's
// ---------------------------------------------------------------------------------------

#[test]
fn a_loop_in_the_tree_is_reported_with_its_frames_not_walked_forever() {
    let mut buffer = BufferCore::new();
    set(&mut buffer, &identity("a", "b", secs(1)));
    set(&mut buffer, &identity("b", "c", secs(1)));
    set(&mut buffer, &identity("c", "a", secs(1)));
    set(&mut buffer, &identity("c", "d", secs(1)));
    set(&mut buffer, &identity("root", "x", secs(1)));
    for time in [secs(1), Stamp::LATEST] {
        let err = buffer.lookup("x", "d", time).unwrap_err();
        let Tf2Error::Loop { cycle } = &err else {
            panic!("expected a loop, got {err:?}");
        };
        assert_eq!(cycle.first(), cycle.last());
        assert_eq!(cycle.len(), 4, "{cycle:?}");
        for frame in ["a", "b", "c"] {
            assert!(cycle.iter().any(|f| f == frame), "{cycle:?}");
        }
        assert!(err.to_string().contains("contains a loop"), "{err}");
        assert!(!buffer.can_transform("x", "d", time));
    }
}

#[test]
fn a_chain_as_deep_as_the_bound_still_resolves() {
    let mut buffer = BufferCore::new();
    let names: Vec<String> = (0..=MAX_GRAPH_DEPTH).map(|i| format!("f{i}")).collect();
    for pair in names.windows(2) {
        set(&mut buffer, &link(&pair[0], &pair[1], secs(1), 1.0, 0.0));
    }
    let out = buffer
        .lookup(&names[0], &names[MAX_GRAPH_DEPTH], secs(1))
        .unwrap();
    assert!((out.transform.translation.x - MAX_GRAPH_DEPTH as f64).abs() < 1e-6);
}

#[test]
fn unconnected_trees_are_named_by_their_roots() {
    let mut buffer = BufferCore::new();
    set(&mut buffer, &identity("map", "odom", secs(1)));
    set(&mut buffer, &identity("odom", "base", secs(1)));
    set(&mut buffer, &identity("world", "camera", secs(1)));
    let expected = Tf2Error::Connectivity {
        target_frame: "base".into(),
        target_root: "map".into(),
        source_frame: "camera".into(),
        source_root: "world".into(),
    };
    assert_eq!(
        buffer.lookup("base", "camera", secs(1)).unwrap_err(),
        expected
    );
    assert_eq!(
        buffer.lookup("base", "camera", Stamp::LATEST).unwrap_err(),
        expected
    );
}

#[test]
fn data_older_than_the_cache_length_is_refused_with_the_facts() {
    let mut buffer = BufferCore::new();
    set(&mut buffer, &identity("a", "b", secs(20)));
    let err = buffer
        .set_transform(&identity("a", "b", secs(5)), "late", false)
        .unwrap_err();
    assert_eq!(
        err,
        Tf2Error::OldData {
            frame: "b".into(),
            stamp: secs(5),
            authority: "late".into(),
            newest: secs(20),
            cache_length_ns: 10 * SECOND,
        }
    );
    assert!(err.to_string().contains("nothing before 10 s"), "{err}");
    // A longer cache keeps it.
    let mut buffer = BufferCore::with_cache_length(Duration::from_secs(30));
    set(&mut buffer, &identity("a", "b", secs(20)));
    assert_eq!(
        buffer.set_transform(&identity("a", "b", secs(5)), "late", false),
        Ok(())
    );
    assert_eq!(buffer.cache_length(), Duration::from_secs(30));
}

#[test]
fn a_frame_can_be_reparented_and_each_time_uses_its_parent_then() {
    let mut buffer = BufferCore::new();
    set(&mut buffer, &link("table", "cup", secs(1), 1.0, 0.0));
    set(&mut buffer, &link("table", "cup", secs(2), 1.0, 0.0));
    set(&mut buffer, &link("hand", "cup", secs(3), 0.0, 0.1));
    set(&mut buffer, &link("world", "table", secs(1), 5.0, 0.0));
    set(&mut buffer, &link("world", "table", secs(4), 5.0, 0.0));
    set(&mut buffer, &link("world", "hand", secs(1), 0.0, 7.0));
    set(&mut buffer, &link("world", "hand", secs(4), 0.0, 7.0));
    assert_eq!(buffer.parent("cup", secs(2)), Some("table"));
    assert_eq!(buffer.parent("cup", ns(2_500_000_000)), Some("table"));
    assert_eq!(buffer.parent("cup", secs(3)), Some("hand"));
    assert_eq!(buffer.parent("cup", Stamp::LATEST), Some("hand"));
    assert_eq!(buffer.parent("world", Stamp::LATEST), None);
    let on_table = buffer.lookup("world", "cup", ns(1_500_000_000)).unwrap();
    assert!((on_table.transform.translation.x - 6.0).abs() < EPS);
    // Between the two parents: the older link, not a blend.
    let between = buffer.lookup("world", "cup", ns(2_500_000_000)).unwrap();
    assert!((between.transform.translation.x - 6.0).abs() < EPS);
    let in_hand = buffer.lookup("world", "cup", secs(3)).unwrap();
    assert!((in_hand.transform.translation.y - 7.1).abs() < EPS);
}

#[test]
fn latest_ignores_static_links_and_a_frame_can_switch_kind() {
    let mut buffer = BufferCore::new();
    buffer
        .set_transform(&link("base", "lidar", secs(1), 0.0, 1.0), "urdf", true)
        .unwrap();
    set(&mut buffer, &link("odom", "base", secs(5), 1.0, 0.0));
    set(&mut buffer, &link("odom", "base", secs(6), 2.0, 0.0));
    let out = buffer.lookup("odom", "lidar", Stamp::LATEST).unwrap();
    assert_eq!(out.stamp, secs(6));
    assert!((out.transform.translation.x - 2.0).abs() < EPS);
    // All static: resolves to LATEST, found at every time.
    assert_eq!(
        buffer.latest_common_time("base", "lidar"),
        Ok(Stamp::LATEST)
    );
    // base becomes static: its history is gone, one value valid at every time.
    buffer
        .set_transform(&link("odom", "base", secs(7), 3.0, 0.0), "fixed", true)
        .unwrap();
    let out = buffer.lookup("odom", "lidar", secs(100)).unwrap();
    assert!((out.transform.translation.x - 3.0).abs() < EPS);
    // And back: a fresh time cache.
    set(&mut buffer, &link("odom", "base", secs(8), 4.0, 0.0));
    assert!(buffer.lookup("odom", "lidar", secs(100)).is_err());
    assert!(buffer.lookup("odom", "lidar", secs(8)).is_ok());
}

#[test]
fn clear_drops_time_stamped_data_and_keeps_static_transforms_and_names() {
    let mut buffer = BufferCore::new();
    buffer
        .set_transform(&identity("base", "lidar", secs(1)), "urdf", true)
        .unwrap();
    set(&mut buffer, &identity("odom", "base", secs(5)));
    buffer.clear();
    assert!(buffer.lookup("base", "lidar", secs(9)).is_ok());
    assert!(matches!(
        buffer.lookup("odom", "base", secs(5)),
        Err(Tf2Error::Extrapolation {
            kind: Extrapolation::NoData,
            ..
        })
    ));
    assert_eq!(buffer.frame_names(), ["lidar", "base", "odom"]);
    assert_eq!(
        buffer.all_frames_as_string(),
        "Frame lidar exists with parent base.\nFrame base exists with parent NO_PARENT.\n"
    );
}

#[test]
fn frames_lists_parent_publisher_and_the_stamps_held() {
    let mut buffer = BufferCore::new();
    buffer
        .set_transform(&identity("base", "lidar", secs(1)), "urdf", true)
        .unwrap();
    for s in 5..=7 {
        buffer
            .set_transform(&identity("odom", "base", secs(s)), "odometry", false)
            .unwrap();
    }
    let frames = buffer.frames();
    let names: Vec<&str> = frames.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["lidar", "base", "odom"]);
    let (lidar, base, odom) = (&frames[0], &frames[1], &frames[2]);
    assert_eq!(lidar.parent.as_deref(), Some("base"));
    assert!(lidar.is_static && lidar.stored == 1 && lidar.authority == "urdf");
    assert_eq!(base.parent.as_deref(), Some("odom"));
    assert_eq!(
        (base.oldest, base.newest, base.stored),
        (Some(secs(5)), Some(secs(7)), 3)
    );
    assert_eq!(base.authority, "odometry");
    assert_eq!(odom.parent, None);
    assert_eq!((odom.newest, odom.stored), (None, 0));
    assert_eq!(
        buffer.all_frames_as_string(),
        "Frame lidar exists with parent base.\nFrame base exists with parent odom.\n"
    );
}

#[test]
fn lookup_between_two_times_holds_the_fixed_frame_still() {
    // A robot drives 1 m/s along x in odom; where was the point it saw at t = 1 s, as seen
    // from where it is at t = 3 s? 2 m behind.
    let mut buffer = BufferCore::new();
    for s in 0..=4 {
        set(&mut buffer, &link("odom", "base", secs(s), s as f64, 0.0));
    }
    let out = buffer
        .lookup_transform_full("base", secs(3), "base", secs(1), "odom")
        .unwrap();
    assert_eq!(out.header.stamp, secs(3));
    assert_eq!(
        (out.header.frame_id.as_str(), out.child_frame_id.as_str()),
        ("base", "base")
    );
    assert!((out.transform.translation.x + 2.0).abs() < EPS);
    let missing = buffer.lookup_full("base", secs(3), "base", secs(9), "odom");
    assert!(matches!(
        missing,
        Err(Tf2Error::Extrapolation {
            kind: Extrapolation::Future { .. },
            ..
        })
    ));
    assert!(matches!(
        buffer.lookup_full("base", secs(3), "base", secs(1), "/odom"),
        Err(Tf2Error::InvalidArgument { .. })
    ));
}

#[test]
fn interpolated_lookups_blend_every_link_of_the_path() {
    let mut buffer = BufferCore::new();
    let yaw = |a: f64| Quaternion::from_rpy(0.0, 0.0, a);
    for (s, x, a) in [(1, 0.0, 0.0), (3, 2.0, 1.0)] {
        let t = Transform::new(Vector3::new(x, 0.0, 0.0), yaw(a));
        set(
            &mut buffer,
            &TransformStamped::new("world", "robot", secs(s), t),
        );
        let arm = Transform::new(Vector3::new(0.0, x, 0.0), yaw(-a));
        set(
            &mut buffer,
            &TransformStamped::new("robot", "arm", secs(s), arm),
        );
    }
    let out = buffer.lookup("world", "arm", secs(2)).unwrap();
    let expected = Transform::new(Vector3::new(1.0, 0.0, 0.0), yaw(0.5))
        * Transform::new(Vector3::new(0.0, 1.0, 0.0), yaw(-0.5));
    assert!((out.transform.translation - expected.translation).length() < 1e-12);
    assert!(out.transform.rotation.angle_to(expected.rotation) < 1e-12);
}
