use super::Outcome;

pub fn run(_quick: bool) -> anyhow::Result<Outcome> {
    anyhow::bail!("this scenario is not built yet")
}
