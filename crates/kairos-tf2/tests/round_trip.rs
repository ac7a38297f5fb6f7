//! Properties over random trees (a hand-rolled xorshift generator from a fixed seed, so
//! every run checks the same trees): lookups in both directions are inverses, agree with
//! the tree composed by hand, and `can_transform` agrees with `lookup`.

use kairos_tf2::{BufferCore, Quaternion, Stamp, Transform, TransformStamped, Vector3};

const SECOND: i64 = 1_000_000_000;

/// xorshift64*: small, fast, and the same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    fn transform(&mut self) -> Transform {
        let translation = Vector3::new(
            self.range(-10.0, 10.0),
            self.range(-10.0, 10.0),
            self.range(-10.0, 10.0),
        );
        let rotation = Quaternion::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        )
        .normalized();
        Transform::new(translation, rotation)
    }
}

/// A random tree: frame 0 is the root; frame i > 0 hangs under a random earlier frame,
/// static or with transforms at 1, 2, .. 5 s.
struct Tree {
    names: Vec<String>,
    parent: Vec<usize>,
    /// Per frame, per whole second 1..=5 (static: the same each second).
    links: Vec<Vec<Transform>>,
}

const STAMPS: i64 = 5;

impl Tree {
    fn random(rng: &mut Rng) -> Tree {
        let n = 2 + rng.below(30);
        let mut tree = Tree {
            names: (0..n).map(|i| format!("frame_{i}")).collect(),
            parent: vec![0; n],
            links: vec![Vec::new(); n],
        };
        for i in 1..n {
            tree.parent[i] = rng.below(i);
            let is_static = rng.below(4) == 0;
            let first = rng.transform();
            tree.links[i] = (0..STAMPS)
                .map(|_| if is_static { first } else { rng.transform() })
                .collect();
        }
        tree
    }

    fn fill(&self, buffer: &mut BufferCore, rng: &mut Rng) {
        for i in 1..self.names.len() {
            let is_static = self.links[i].windows(2).all(|w| w[0] == w[1]);
            // Out of order on purpose: the cache sorts.
            let mut order: Vec<usize> = (0..STAMPS as usize).collect();
            for k in (1..order.len()).rev() {
                order.swap(k, rng.below(k + 1));
            }
            for k in order {
                let t = TransformStamped::new(
                    &self.names[self.parent[i]],
                    &self.names[i],
                    Stamp::from_secs(k as i64 + 1),
                    self.links[i][k],
                );
                buffer.set_transform(&t, "random", is_static).unwrap();
                if is_static {
                    break;
                }
            }
        }
    }

    /// Frame `i` in the root at whole second `s`, composed by hand.
    fn in_root(&self, mut i: usize, s: usize) -> Transform {
        let mut t = Transform::IDENTITY;
        while i != 0 {
            t = self.links[i][s - 1] * t;
            i = self.parent[i];
        }
        t
    }
}

fn assert_identity(t: Transform, context: &str) {
    assert!(t.translation.length() < 1e-9, "{context}: {t:?}");
    assert!(
        t.rotation.angle_to(Quaternion::IDENTITY) < 1e-9,
        "{context}: {t:?}"
    );
}

#[test]
fn lookup_a_to_b_composed_with_b_to_a_is_identity_on_random_trees() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for tree_index in 0..200 {
        let tree = Tree::random(&mut rng);
        let mut buffer = BufferCore::new();
        tree.fill(&mut buffer, &mut rng);
        for _ in 0..50 {
            let a = &tree.names[rng.below(tree.names.len())];
            let b = &tree.names[rng.below(tree.names.len())];
            let time = match rng.below(3) {
                0 => Stamp::LATEST,
                _ => Stamp::from_nanos(SECOND + rng.below(4 * SECOND as usize) as i64),
            };
            let context = format!("tree {tree_index}: {a} <-> {b} at {time}");
            let ab = buffer.lookup(a, b, time).expect(&context);
            let ba = buffer.lookup(b, a, time).expect(&context);
            assert_eq!(ab.stamp, ba.stamp, "{context}");
            assert_identity(ab.transform * ba.transform, &context);
            assert_identity(ba.transform * ab.transform, &context);
            checked += 1;
        }
    }
    assert_eq!(checked, 200 * 50);
}

#[test]
fn lookups_at_a_stamp_equal_the_tree_composed_by_hand() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for tree_index in 0..200 {
        let tree = Tree::random(&mut rng);
        let mut buffer = BufferCore::new();
        tree.fill(&mut buffer, &mut rng);
        for _ in 0..20 {
            let (a, b) = (rng.below(tree.names.len()), rng.below(tree.names.len()));
            let s = 1 + rng.below(STAMPS as usize);
            let found = buffer
                .lookup(&tree.names[a], &tree.names[b], Stamp::from_secs(s as i64))
                .unwrap();
            let expected = tree.in_root(a, s).inverse() * tree.in_root(b, s);
            let context = format!("tree {tree_index}: {b} in {a} at {s} s");
            assert_identity(found.transform * expected.inverse(), &context);
            let p = Vector3::new(1.0, -2.0, 3.0);
            let diff = found.transform.transform_point(p) - expected.transform_point(p);
            assert!(diff.length() < 1e-9, "{context}");
        }
    }
}

#[test]
fn can_transform_agrees_with_lookup_outside_the_data_too() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    for _ in 0..100 {
        let tree = Tree::random(&mut rng);
        let mut buffer = BufferCore::new();
        tree.fill(&mut buffer, &mut rng);
        // A second tree the first cannot reach.
        let island =
            TransformStamped::new("island", "islet", Stamp::from_secs(1), Transform::IDENTITY);
        buffer.set_transform(&island, "random", false).unwrap();
        let mut names = tree.names.clone();
        names.extend([
            "island".to_owned(),
            "islet".to_owned(),
            "nowhere".to_owned(),
        ]);
        for _ in 0..50 {
            let a = &names[rng.below(names.len())];
            let b = &names[rng.below(names.len())];
            let time = Stamp::from_nanos(rng.below(7 * SECOND as usize) as i64);
            let lookup = buffer.lookup(a, b, time);
            assert_eq!(
                buffer.check_transform(a, b, time),
                lookup.map(|_| ()),
                "{a} {b} {time}"
            );
        }
    }
}
