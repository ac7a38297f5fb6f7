//! Broadcasters to a listener in one process: every transform sent is stored, counted,
//! and looked up as sent; a late listener still gets every static frame.

use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use kairos_tf2::{Quaternion, Stamp, Transform, TransformStamped, Vector3};
use kairos_tf2_ros::{
    Buffer, DEFAULT_AUTHORITY, StaticTransformBroadcaster, TransformBroadcaster, TransformListener,
};

fn at(x: f64) -> Transform {
    Transform::new(Vector3::new(x, 0.0, 0.0), Quaternion::IDENTITY)
}

fn odom_base(secs: i64, x: f64) -> TransformStamped {
    TransformStamped::new("odom", "base_link", Stamp::from_secs(secs), at(x))
}

/// Runs what is ready on `exec` until nothing is.
fn drain(exec: &Executor) {
    while exec.spin_some().unwrap() > 0 {}
}

#[test]
fn the_broadcasters_use_tf2_ros_topics_and_qos() {
    let node = Node::new_in(&Context::new(), "talker", "/").unwrap();
    let dynamic = TransformBroadcaster::new(&node).unwrap();
    let statics = StaticTransformBroadcaster::new(&node).unwrap();
    assert_eq!(dynamic.publisher().topic(), "/tf");
    assert_eq!(dynamic.publisher().qos().depth(), 100);
    assert!(!dynamic.publisher().qos().is_transient_local());
    assert_eq!(statics.publisher().topic(), "/tf_static");
    assert_eq!(statics.publisher().qos().depth(), 1);
    assert!(statics.publisher().qos().is_transient_local());
}

#[test]
fn dynamic_transforms_reach_the_listener_and_interpolate() {
    let context = Context::new();
    let talker = Node::new_in(&context, "talker", "/").unwrap();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    let buffer = Buffer::new(robot.clock());
    let listener = TransformListener::new(&robot, buffer.clone()).unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&robot).unwrap();

    let broadcaster = TransformBroadcaster::new(&talker).unwrap();
    broadcaster.send_transform(&odom_base(1, 1.0));
    broadcaster.send_transforms(&[
        odom_base(2, 2.0),
        TransformStamped::new("map", "odom", Stamp::from_secs(2), at(10.0)),
    ]);
    assert_eq!(buffer.waiters(), 0);
    drain(&exec);

    assert_eq!((listener.stored(), listener.rejected()), (3, 0));
    let mid = buffer
        .lookup_transform("odom", "base_link", Stamp::from_secs_f64(1.5))
        .unwrap();
    assert_eq!(mid.transform.translation.x, 1.5);
    let through = buffer
        .lookup_transform("map", "base_link", Stamp::from_secs(2))
        .unwrap();
    assert_eq!(through.transform.translation.x, 12.0);
    let frames = buffer.with_core(|core| core.frames());
    let base = frames.iter().find(|f| f.name == "base_link").unwrap();
    assert_eq!(base.authority, DEFAULT_AUTHORITY);
    assert!(!base.is_static);
    assert_eq!(base.stored, 2);
}

#[test]
fn a_refused_transform_is_counted_not_dropped_silently() {
    let context = Context::new();
    let talker = Node::new_in(&context, "talker", "/").unwrap();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    let buffer = Buffer::new(robot.clock());
    let listener = TransformListener::new(&robot, buffer.clone()).unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&robot).unwrap();
    let broadcaster = TransformBroadcaster::new(&talker).unwrap();
    let mut bad = odom_base(1, 1.0);
    bad.transform.rotation = Quaternion::new(0.0, 0.0, 0.0, 0.0);
    broadcaster.send_transforms(&[bad, odom_base(1, 1.0)]);
    drain(&exec);
    assert_eq!((listener.stored(), listener.rejected()), (1, 1));
}

#[test]
fn a_late_listener_gets_every_static_frame_and_the_newest_of_each() {
    let context = Context::new();
    let talker = Node::new_in(&context, "talker", "/").unwrap();
    let statics = StaticTransformBroadcaster::new(&talker).unwrap();

    // An early listener hears each send: the whole set each time.
    let early_node = Node::new_in(&context, "early", "/").unwrap();
    let early_buffer = Buffer::new(early_node.clock());
    let early = TransformListener::new(&early_node, early_buffer.clone()).unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&early_node).unwrap();

    let lidar = |z| TransformStamped::new("base_link", "lidar", Stamp::LATEST, at(z));
    let camera = TransformStamped::new("base_link", "camera", Stamp::from_secs(3), at(0.7));
    statics.send_transform(&lidar(0.1));
    statics.send_transform(&camera);
    statics.send_transform(&lidar(0.2)); // lidar moved: the newest wins
    assert_eq!(statics.frames(), 2);
    drain(&exec);
    assert_eq!(early.stored(), 1 + 2 + 2);

    // A listener created afterwards: transient local gives it the last message, which
    // holds both frames.
    let late_node = Node::new_in(&context, "late", "/").unwrap();
    let late_buffer = Buffer::new(late_node.clock());
    let late = TransformListener::new(&late_node, late_buffer.clone()).unwrap();
    exec.add_node(&late_node).unwrap();
    drain(&exec);
    assert_eq!((late.stored(), late.rejected()), (2, 0));

    for buffer in [&early_buffer, &late_buffer] {
        // Static: valid at any time, even one long after the stamp.
        let found = buffer
            .lookup_transform("base_link", "lidar", Stamp::from_secs(1000))
            .unwrap();
        assert_eq!(found.transform.translation.x, 0.2);
        let found = buffer
            .lookup_transform("lidar", "camera", Stamp::LATEST)
            .unwrap();
        assert!((found.transform.translation.x - 0.5).abs() < 1e-12);
        let frames = buffer.with_core(|core| core.frames());
        assert!(
            frames
                .iter()
                .filter(|f| f.name != "base_link")
                .all(|f| f.is_static)
        );
    }
}
