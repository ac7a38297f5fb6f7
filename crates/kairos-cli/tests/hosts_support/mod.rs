//! Two hosts on one machine for the tests that cross a network: two network namespaces
//! joined by a veth pair (root and iproute2 needed, as CI has), deleted on drop.
#![allow(dead_code)]

use std::process::Command;

/// Two network namespaces joined by a veth pair: two hosts on one machine. Deleted on drop.
pub struct TwoHosts {
    pub a: String,
    pub b: String,
    subnet: u8,
}

pub fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("`ip` (iproute2) is required: apt-get install iproute2 ({e})"));
    assert!(
        out.status.success(),
        "ip {} failed: {} (this test needs root, as CI runs it)",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl TwoHosts {
    pub fn new() -> Self {
        let id = std::process::id();
        let hosts = Self {
            a: format!("kz{id}a"),
            b: format!("kz{id}b"),
            subnet: (id % 200) as u8 + 20,
        };
        let (va, vb) = (format!("kz{id}va"), format!("kz{id}vb"));
        ip(&["netns", "add", &hosts.a]);
        ip(&["netns", "add", &hosts.b]);
        ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb]);
        ip(&["link", "set", &va, "netns", &hosts.a]);
        ip(&["link", "set", &vb, "netns", &hosts.b]);
        for (ns, dev, host) in [(&hosts.a, &va, 1), (&hosts.b, &vb, 2)] {
            let addr = format!("{}/24", hosts.addr(host));
            ip(&["-n", ns, "addr", "add", &addr, "dev", dev]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        hosts
    }

    pub fn addr(&self, host: u8) -> String {
        format!("10.231.{}.{host}", self.subnet)
    }

    /// `kairos` on host `ns`, with no configuration of its own.
    pub fn exec(&self, ns: &str) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_kairos")])
            .env_remove("ZENOH_CONFIG_OVERRIDE")
            .env_remove("ROS_DOMAIN_ID");
        cmd
    }

    /// `kairos args` on host `ns`, connecting to the router on host A.
    pub fn kairos(&self, ns: &str, host: u8, args: &[&str]) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_kairos")])
            .args(args)
            .env(
                "ZENOH_CONFIG_OVERRIDE",
                format!(
                    "connect/endpoints=[\"tcp/{}:7447\"];listen/endpoints=[\"tcp/{}:0\"]",
                    self.addr(1),
                    self.addr(host)
                ),
            )
            .env_remove("ROS_DOMAIN_ID");
        cmd
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}
