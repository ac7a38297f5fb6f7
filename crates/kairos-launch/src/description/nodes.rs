//! The node entities: `node`, `lifecycle_node` (with `autostart`), `node_container` and
//! `load_composable_node`, read into processes: a node's executable found in its package
//! (an rclpy program run under `kairos.run`), its ROS arguments checked with the parser
//! the node will use, a managed node's autostart as a bounded `kairos lifecycle set`, and
//! composable nodes loaded into kairos's container (see the `composition` module).

use super::process::process_keys;
use super::*;

/// A node entity's own keys (see `process::process_keys` for the rest).
const NODE_KEYS: &[&str] = &["pkg", "exec", "namespace", "param", "remap", "ros_args"];

impl Reader {
    pub(super) fn node(&mut self, ctx: &Context, body: &Node) -> Result<(), LaunchError> {
        let f = Fields::of(ctx, "node", body, &process_keys(NODE_KEYS))?;
        self.push_node(ctx, &f, body)
    }

    /// A node entity's process: its package's executable (an rclpy program under
    /// `kairos.run`), its `args`, then its ROS arguments; labelled after the executable.
    fn push_node(&mut self, ctx: &Context, f: &Fields<'_>, body: &Node) -> Result<(), LaunchError> {
        let exec = ctx.text(f.required(ctx, "exec")?, "exec")?;
        let (program, mut args) =
            python::command_for(ctx, body.line, node_program(ctx, f, body, &exec)?)?;
        if let Some(text) = f.text(ctx, "args")? {
            args.extend(split_words(ctx, body.line, &text)?);
        }
        args.extend(node_ros_args(ctx, f, body)?);
        let label = Some(exec.rsplit('/').next().unwrap_or(&exec).to_owned());
        self.push(ctx, f, body.line, program, args, label)
    }

    /// A managed node (`lifecycle_node`): a node, and with `autostart: true` a short
    /// process that configures then activates it (`kairos lifecycle set NODE configure
    /// activate`, each step's wait bounded), as ROS 2's `autostart` does.
    pub(super) fn lifecycle_node(&mut self, ctx: &Context, body: &Node) -> Result<(), LaunchError> {
        let mut keys = process_keys(NODE_KEYS);
        keys.push("autostart");
        let f = Fields::of(ctx, "lifecycle_node", body, &keys)?;
        let name = ctx.text(f.required(ctx, "name")?, "name")?;
        self.push_node(ctx, &f, body)?;
        let autostart = f
            .get("autostart")
            .map(|n| ctx.bool(n, "autostart"))
            .transpose()?
            .unwrap_or(false);
        if !autostart {
            return Ok(());
        }
        let namespace = ctx.namespace_of(&f)?;
        let node = fully_qualified(&namespace, &name);
        let kairos = std::env::current_exe()
            .map_err(|e| ctx.error(body.line, format!("cannot find the kairos binary: {e}")))?;
        let args = [
            "lifecycle",
            "set",
            &node,
            "configure",
            "activate",
            "--timeout",
            "30",
        ];
        let none = Fields::empty("lifecycle_node", body.line);
        self.push(
            ctx,
            &none,
            body.line,
            kairos,
            args.iter().map(|a| a.to_string()).collect(),
            Some("autostart".into()),
        )
    }

    /// A component container (`node_container`) and the composable nodes it loads: an
    /// rclcpp_components container is kairos's (`python3 -m kairos.components.container`);
    /// its composable nodes are loaded as `load_composable_node` loads them.
    pub(super) fn node_container(&mut self, ctx: &Context, body: &Node) -> Result<(), LaunchError> {
        let mut keys = process_keys(NODE_KEYS);
        keys.push("composable_node");
        let f = Fields::of(ctx, "node_container", body, &keys)?;
        let exec = ctx.text(f.required(ctx, "exec")?, "exec")?;
        let name = ctx.text(f.required(ctx, "name")?, "name")?;
        let namespace = ctx.namespace_of(&f)?;
        let container = fully_qualified(&namespace, &name);
        let (program, mut args) = match composition::kairos_container(f.text(ctx, "pkg")?, &exec) {
            Some(words) => (python::python(ctx, body.line)?, words),
            None => (node_program(ctx, &f, body, &exec)?, Vec::new()),
        };
        if let Some(text) = f.text(ctx, "args")? {
            args.extend(split_words(ctx, body.line, &text)?);
        }
        args.extend(node_ros_args(ctx, &f, body)?);
        self.push(ctx, &f, body.line, program, args, Some(exec))?;
        self.load_composable_nodes(ctx, &f, body.line, &container)
    }

    /// A short process that loads `f`'s composable nodes into `container` through its
    /// `load_node` service (`python3 -m kairos.components.load`; its wait is bounded).
    pub(super) fn load_composable_nodes(
        &mut self,
        ctx: &Context,
        f: &Fields<'_>,
        line: usize,
        container: &str,
    ) -> Result<(), LaunchError> {
        let mut requests = Vec::new();
        for item in f.list(ctx, "composable_node")? {
            if self.condition_holds(ctx, item)? {
                requests.push(composition::load_request(ctx, item)?);
            }
        }
        if requests.is_empty() {
            return Ok(());
        }
        let python = python::python(ctx, line)?;
        let mut args = vec![
            "-m".to_owned(),
            "kairos.components.load".to_owned(),
            container.to_owned(),
        ];
        args.extend(requests);
        let none = Fields::empty("load_composable_node", line);
        self.push(
            ctx,
            &none,
            line,
            python,
            args,
            Some("load_composable_nodes".into()),
        )
    }
}

/// The program a node entity runs: its package's executable, or one found as
/// [`find_executable`] finds it.
fn node_program(
    ctx: &Context,
    f: &Fields<'_>,
    body: &Node,
    exec: &str,
) -> Result<PathBuf, LaunchError> {
    Ok(match f.text(ctx, "pkg")? {
        // A node of a package is that package's executable, as ROS 2 finds it.
        Some(pkg) if !exec.contains('/') => ctx
            .scope
            .packages
            .executable(&pkg, exec)
            .map_err(|e| ctx.error(body.line, e.to_string()))?,
        _ => find_executable(exec, ctx.scope.dir()).map_err(|why| ctx.error(body.line, why))?,
    })
}

/// A node entity's `--ros-args ...` (none when it has none): its name, namespace,
/// parameters and remappings, checked with the reader the node will use.
fn node_ros_args(ctx: &Context, f: &Fields<'_>, body: &Node) -> Result<Vec<String>, LaunchError> {
    let mut args = Vec::new();
    let mut ros = Vec::new();
    if let Some(name) = f.text(ctx, "name")? {
        ros.extend(["-r".to_owned(), format!("__node:={name}")]);
    }
    let namespace = ctx.namespace_of(f)?;
    if !namespace.is_empty() {
        ros.extend(["-r".to_owned(), format!("__ns:={namespace}")]);
    }
    for item in f.list(ctx, "param")? {
        let p = Fields::of(ctx, "param", item, &["name", "value", "from"])?;
        match (p.get("name"), p.get("value"), p.get("from")) {
            (Some(name), Some(value), None) => {
                let name = ctx.text(name, "name")?;
                let value = match &value.value {
                    Value::Scalar { text, quoted } => {
                        let text = substitute(text, &ctx.scope)
                            .map_err(|why| ctx.error(value.line, format!("value: {why}")))?;
                        if *quoted {
                            format!("'{}'", text.replace('\'', "''"))
                        } else {
                            text
                        }
                    }
                    _ => ctx.text(value, "value")?,
                };
                ros.extend(["-p".to_owned(), format!("{name}:={value}")]);
            }
            (None, None, Some(from)) => {
                let path = ctx.path(from, "from")?;
                ros.extend(["--params-file".to_owned(), path.display().to_string()]);
            }
            _ => {
                return Err(ctx.error(
                    item.line,
                    "a 'param' is either 'name' with 'value', or 'from' a parameter file",
                ));
            }
        }
    }
    for item in f.list(ctx, "remap")? {
        let r = Fields::of(ctx, "remap", item, &["from", "to"])?;
        let from = ctx.text(r.required(ctx, "from")?, "from")?;
        let to = ctx.text(r.required(ctx, "to")?, "to")?;
        ros.extend(["-r".to_owned(), format!("{from}:={to}")]);
    }
    if let Some(text) = f.text(ctx, "ros_args")? {
        ros.extend(split_words(ctx, body.line, &text)?);
    }
    if !ros.is_empty() {
        // The same reader the node will use, so a bad rule or parameter file fails
        // here, before anything starts.
        let mut check = vec!["node".to_owned(), "--ros-args".to_owned()];
        check.extend(ros.iter().cloned());
        kairos::graph::RosArgs::parse(&check)
            .map_err(|e| ctx.error(body.line, format!("the node's ROS arguments: {e}")))?;
        args.push("--ros-args".to_owned());
        args.extend(ros);
    }
    Ok(args)
}
