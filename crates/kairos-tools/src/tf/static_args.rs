//! The arguments of tf2_ros's `static_transform_publisher`, read as it reads them, so a
//! launch file's or a script's line works unchanged with `kairos tf static`:
//! - flags: `--x --y --z`, a rotation as a quaternion (`--qx --qy --qz --qw`) or as Euler
//!   angles (`--roll --pitch --yaw`, radians), `--frame-id`, `--child-frame-id`; a
//!   missing translation or rotation is the identity;
//! - the old positional forms, `x y z yaw pitch roll frame child` (8 values) and
//!   `x y z qx qy qz qw frame child` (9), which tf2_ros still takes with a warning.
//!
//! Every mistake is an error in tf2_ros's words (both rotations, both forms, extra
//! arguments, an empty frame, a value that is not a number), and a rotation that is not a
//! unit quaternion is refused here, where tf2's listeners would drop it silently.

use clap::Args;
use kairos_tf2::{Quaternion, Transform, Vector3};

/// How far a quaternion's squared length may be from 1: tf2's own bound, beyond which a
/// listener ignores the transform.
const UNIT_TOLERANCE: f64 = 0.01;

/// The flags as given (every one optional) and the positional values: the command line
/// of `kairos tf static`.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct Given {
    /// Translation in meters (default 0).
    #[arg(long, allow_negative_numbers = true)]
    pub x: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    pub y: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    pub z: Option<f64>,
    /// Rotation as a quaternion (default the identity)...
    #[arg(long, allow_negative_numbers = true)]
    pub qx: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    pub qy: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    pub qz: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    pub qw: Option<f64>,
    /// ...or as Euler angles in radians.
    #[arg(long, allow_negative_numbers = true)]
    pub roll: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    pub pitch: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    pub yaw: Option<f64>,
    /// The parent frame.
    #[arg(long)]
    pub frame_id: Option<String>,
    /// The child frame.
    #[arg(long)]
    pub child_frame_id: Option<String>,
    /// The old form, still taken: `x y z yaw pitch roll frame child` or `x y z qx qy qz qw
    /// frame child`.
    #[arg(allow_negative_numbers = true, value_name = "OLD_FORM")]
    pub positional: Vec<String>,
}

/// The transform to publish, and whether it came in the deprecated positional form.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticTransform {
    pub frame_id: String,
    pub child_frame_id: String,
    pub transform: Transform,
    pub old_style: bool,
}

impl Given {
    /// The transform these arguments name, or tf2_ros's complaint about them.
    pub fn resolve(&self) -> Result<StaticTransform, String> {
        let quat_flag = [self.qx, self.qy, self.qz, self.qw]
            .iter()
            .any(Option::is_some);
        let rpy_flag = [self.roll, self.pitch, self.yaw]
            .iter()
            .any(Option::is_some);
        let trans_flag = [self.x, self.y, self.z].iter().any(Option::is_some);
        let frame_flag = self.frame_id.is_some() || self.child_frame_id.is_some();
        if quat_flag && rpy_flag {
            return Err("Cannot specify both quaternion and Euler rotations".into());
        }
        let (translation, rotation, frame_id, child_frame_id, old_style) = match self
            .positional
            .len()
        {
            0 => {
                let rotation = if rpy_flag {
                    Quaternion::from_rpy(
                        self.roll.unwrap_or(0.0),
                        self.pitch.unwrap_or(0.0),
                        self.yaw.unwrap_or(0.0),
                    )
                } else {
                    Quaternion::new(
                        self.qx.unwrap_or(0.0),
                        self.qy.unwrap_or(0.0),
                        self.qz.unwrap_or(0.0),
                        self.qw.unwrap_or(1.0),
                    )
                };
                let translation = Vector3::new(
                    self.x.unwrap_or(0.0),
                    self.y.unwrap_or(0.0),
                    self.z.unwrap_or(0.0),
                );
                let frame = self.frame_id.clone().unwrap_or_default();
                let child = self.child_frame_id.clone().unwrap_or_default();
                (translation, rotation, frame, child, false)
            }
            n @ (8 | 9) => {
                if frame_flag || trans_flag || quat_flag {
                    return Err(
                        "Cannot specify both new-style (flags) and old-style (arguments)".into(),
                    );
                }
                let p = &self.positional;
                let number = |i: usize, name: &str| -> Result<f64, String> {
                    p[i].trim()
                        .parse::<f64>()
                        .map_err(|_| format!("Failed to parse {name} argument as float"))
                };
                let translation = Vector3::new(number(0, "x")?, number(1, "y")?, number(2, "z")?);
                let rotation = if n == 8 {
                    let (yaw, pitch, roll) =
                        (number(3, "yaw")?, number(4, "pitch")?, number(5, "roll")?);
                    Quaternion::from_rpy(roll, pitch, yaw)
                } else {
                    Quaternion::new(
                        number(3, "qx")?,
                        number(4, "qy")?,
                        number(5, "qz")?,
                        number(6, "qw")?,
                    )
                };
                (
                    translation,
                    rotation,
                    p[n - 2].clone(),
                    p[n - 1].clone(),
                    true,
                )
            }
            _ => return Err("Extra unparsed arguments on command-line".into()),
        };
        if frame_id.is_empty() {
            return Err("Frame id must not be empty".into());
        }
        if child_frame_id.is_empty() {
            return Err("Child frame id must not be empty".into());
        }
        let values = [
            translation.x,
            translation.y,
            translation.z,
            rotation.x,
            rotation.y,
            rotation.z,
            rotation.w,
        ];
        if values.iter().any(|v| !v.is_finite()) {
            return Err(format!(
                "the transform has a value that is not a finite number: translation ({}, {}, \
                 {}), rotation ({}, {}, {}, {})",
                values[0], values[1], values[2], values[3], values[4], values[5], values[6]
            ));
        }
        let length2 = rotation.x * rotation.x
            + rotation.y * rotation.y
            + rotation.z * rotation.z
            + rotation.w * rotation.w;
        if (length2 - 1.0).abs() > UNIT_TOLERANCE {
            return Err(format!(
                "the rotation ({}, {}, {}, {}) is not a unit quaternion (squared length \
                 {length2}): tf2's listeners would ignore it; give a normalized quaternion, \
                 or the rotation as --roll/--pitch/--yaw",
                rotation.x, rotation.y, rotation.z, rotation.w
            ));
        }
        Ok(StaticTransform {
            frame_id,
            child_frame_id,
            transform: Transform::new(translation, rotation),
            old_style,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positional(values: &str) -> Given {
        Given {
            positional: values.split(' ').map(str::to_owned).collect(),
            ..Given::default()
        }
    }

    fn frames(parent: &str, child: &str) -> Given {
        Given {
            frame_id: Some(parent.into()),
            child_frame_id: Some(child.into()),
            ..Given::default()
        }
    }

    #[test]
    fn only_the_frames_is_the_identity() {
        let t = frames("map", "odom").resolve().unwrap();
        assert_eq!(
            (t.frame_id.as_str(), t.child_frame_id.as_str()),
            ("map", "odom")
        );
        assert_eq!(t.transform, Transform::IDENTITY);
        assert!(!t.old_style);
    }

    #[test]
    fn flags_give_translation_and_a_quaternion_or_euler_angles() {
        let quat = Given {
            x: Some(1.0),
            z: Some(-2.5),
            qz: Some(std::f64::consts::FRAC_1_SQRT_2),
            qw: Some(std::f64::consts::FRAC_1_SQRT_2),
            ..frames("a", "b")
        }
        .resolve()
        .unwrap();
        let euler = Given {
            x: Some(1.0),
            z: Some(-2.5),
            yaw: Some(std::f64::consts::FRAC_PI_2),
            ..frames("a", "b")
        }
        .resolve()
        .unwrap();
        assert_eq!(quat.transform.translation, Vector3::new(1.0, 0.0, -2.5));
        for (a, b) in [
            (quat.transform.rotation.z, euler.transform.rotation.z),
            (quat.transform.rotation.w, euler.transform.rotation.w),
        ] {
            assert!((a - b).abs() < 1e-12, "{quat:?} {euler:?}");
        }
    }

    #[test]
    fn the_old_forms_take_yaw_pitch_roll_or_a_quaternion_then_the_frames() {
        let rpy = positional("1 2 3 1.5707963267948966 0 0 base_link laser")
            .resolve()
            .unwrap();
        assert!(rpy.old_style);
        assert_eq!(rpy.frame_id, "base_link");
        assert_eq!(rpy.child_frame_id, "laser");
        assert_eq!(rpy.transform.translation, Vector3::new(1.0, 2.0, 3.0));
        // The fourth value is yaw: a rotation about z.
        let q = rpy.transform.rotation;
        assert!(q.x.abs() < 1e-12 && q.y.abs() < 1e-12 && (q.z - q.w).abs() < 1e-12);
        let quat = positional("0 0 -1 0 0 0 1 map odom").resolve().unwrap();
        assert_eq!(quat.transform.rotation, Quaternion::IDENTITY);
        assert_eq!(quat.transform.translation.z, -1.0);
    }

    #[test]
    fn mistakes_are_tf2_ros_errors() {
        let cases = [
            (Given::default(), "Frame id must not be empty"),
            (
                Given {
                    frame_id: Some("a".into()),
                    ..Given::default()
                },
                "Child frame id must not be empty",
            ),
            (
                Given {
                    qw: Some(1.0),
                    roll: Some(0.1),
                    ..frames("a", "b")
                },
                "Cannot specify both quaternion and Euler rotations",
            ),
            (
                Given {
                    x: Some(1.0),
                    ..positional("0 0 0 0 0 0 a b")
                },
                "Cannot specify both new-style (flags) and old-style (arguments)",
            ),
            (positional("0 0 0 a b"), "Extra unparsed arguments"),
            (
                positional("0 zero 0 0 0 0 a b"),
                "Failed to parse y argument as float",
            ),
            (positional("0 0 0 0 0 0 0 a b"), "is not a unit quaternion"),
            (
                Given {
                    x: Some(f64::NAN),
                    ..frames("a", "b")
                },
                "not a finite number",
            ),
        ];
        for (given, words) in cases {
            let err = given.resolve().unwrap_err();
            assert!(err.contains(words), "{given:?}: {err}");
        }
    }
}
