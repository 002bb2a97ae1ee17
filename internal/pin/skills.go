package pin

// Skills are a server's skills (the skills extension, SEP-2640): what the
// model reads to choose one (its frontmatter: name, description) and the
// files it then follows, each with its digest. A skill that changes after
// it was pinned is held to the lockfile as a changed tool is. The lockfile
// key is the skill's URI as the server gives it (skill://<name>/SKILL.md).
// Not one of Kinds: skills are no list of the catalog, serve holds them
// when they are listed or got (catalog.Pinner.CheckSkill) and mcptrunk pin
// reads them with skills/list.
const Skills Kind = "skills"
