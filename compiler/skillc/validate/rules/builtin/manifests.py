"""Claude Code plugin manifests (codes G1xx): emitted by the manifest stage (``skillc.validate.manifests``).

Profiles: `recommended` and `claude` (Claude Code reads these files; the Agent Skills specification
does not define them, so not `spec`).  Severities follow `claude plugin validate`: what it refuses
is an error, what it warns about under `--strict` is a warning or info; what it misses but breaks an
install (a listed folder that is not there) is an error too.
"""

from __future__ import annotations

from ....model import Severity
from ..registry import declare

PROFILES = frozenset({"recommended", "claude"})
NO_KINDS: frozenset = frozenset()

MANIFEST_NOT_JSON = declare(
    "G101", "manifest-not-json", "A plugin or marketplace manifest is not valid JSON (or cannot be read).",
    rationale="""
        Claude Code refuses a marketplace or plugin whose manifest does not parse, and says little
        about where. skillc names the line and column of the first error (comments and trailing
        commas are not JSON).
    """,
    bad='{"name": "tools",}', good='{"name": "tools"}',
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-MP-001", "CC-PL-006"),
)
MANIFEST_STRUCTURE = declare(
    "G102", "manifest-structure", "A manifest misses a required field or has a field of the wrong type.",
    rationale="""
        The structure Claude Code reads (`schemas/claude-marketplace.schema.json`,
        `schemas/claude-plugin.schema.json`): a marketplace needs `name`, `owner` (an object with a
        `name`) and `plugins`, each plugin `name` and `source`; a plugin manifest needs `name`.
        Unknown keys are allowed (Claude Code ignores them).
    """,
    bad='{"name": "tools", "plugins": []}', good='{"name": "tools", "owner": {"name": "Acme"}, "plugins": []}',
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-MP-001", "CC-PL-004", "CC-PL-009"),
)
MANIFEST_RESERVED_NAME = declare(
    "G103", "manifest-reserved-name", "A marketplace or plugin name is reserved for Anthropic.",
    rationale="""
        Claude Code reserves marketplace names (`claude-plugins-official`, `anthropic-agent-skills`,
        `agent-skills`, `claude-for-…` and others) and rejects names that pass as Anthropic's own
        (`claude-…`, `anthropic-…`) unless the manifest's owner is Anthropic (an anthropic.com
        address).
    """,
    bad='{"name": "claude-deploy-tools"}', good='{"name": "deploy-tools"}',
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-MP-002", "CC-PL-018"),
)
PLUGIN_NAME_INVALID = declare(
    "G104", "plugin-name-invalid", "A plugin name holds characters Claude Code refuses.",
    rationale="""
        Claude Code accepts plugin names of letters, digits, `.`, `_` and `-`, starting with a
        letter or digit: `skills/brand-guidelines` or `my plugin` is an error in `claude plugin
        validate`.
    """,
    bad='{"name": "my plugin"}', good='{"name": "my-plugin"}',
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-MP-002", "CC-PL-005"),
)
PLUGIN_NAME_NOT_KEBAB_CASE = declare(
    "G105", "plugin-name-not-kebab-case", "A plugin or marketplace name is not kebab-case.",
    rationale="""
        Claude Code loads `My_Plugin`, but warns: the Claude.ai marketplace sync rejects names that
        are not kebab-case. A warning, as in `claude plugin validate`.
    """,
    bad='{"name": "My_Plugin"}', good='{"name": "my-plugin"}', severity=Severity.WARNING,
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-PL-016",),
)
DUPLICATE_PLUGIN_NAME = declare(
    "G106", "duplicate-plugin-name", "A marketplace lists two plugins with the same name.",
    rationale="""
        `claude plugin validate` refuses the marketplace (`Duplicate plugin name "x"`); users
        install plugins by name, so only one could ever be reached.
    """,
    bad='"plugins": [{"name": "x", …}, {"name": "x", …}]', good='"plugins": [{"name": "x", …}, {"name": "y", …}]',
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-MP-003",),
)
MANIFEST_PATH_INVALID = declare(
    "G107", "manifest-path-invalid", "A plugin source or component path is not a `./` path inside the plugin.",
    rationale="""
        Claude Code resolves a relative plugin `source` and component paths (`skills`, `commands`,
        `agents`, `hooks`…) only when they start with `./`, use forward slashes and never `..`
        (`plugins[0].source: Path contains ".."`); a source object's `sha` is a full 40-character
        commit hash.
    """,
    bad='"source": "plugins/formatter"', good='"source": "./plugins/formatter"',
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-MP-003", "CC-PL-007"),
)
LISTED_FOLDER_MISSING = declare(
    "G108", "listed-folder-missing", "A manifest names a plugin folder or skill folder that is not there.",
    rationale="""
        `claude plugin validate` does not check that a relative `source` folder, or a folder listed
        in `skills`, exists: the marketplace validates, and the plugin installs without the skill.
        skillc checks that each is a folder of the repository holding a SKILL.md (or skill
        folders). An error: what users install is not what the manifest promises.
    """,
    bad='"skills": ["./skills/pdf"]  (no skills/pdf/ folder)', good='"skills": ["./skills/pdf"]  (skills/pdf/SKILL.md)',
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-PL-007",),
)
PLUGIN_VERSION_NOT_SEMVER = declare(
    "G109", "plugin-version-not-semver", "A plugin `version` is not a semantic version.",
    rationale="""
        Claude Code caches installs per version and skips an update whose version did not change;
        versions are compared as MAJOR.MINOR.PATCH. A warning: `1.0` loads, but updates misbehave.
    """,
    bad='"version": "1.0"', good='"version": "1.0.0"', severity=Severity.WARNING,
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-PL-003",),
)
MANIFEST_METADATA_MISSING = declare(
    "G110", "manifest-metadata-missing", "A marketplace has no description, or a plugin manifest no version.",
    rationale="""
        `claude plugin validate --strict` fails on them: a marketplace without
        `metadata.description`, a plugin without `version` (installs are cached per version, so an
        unversioned plugin never updates). Info: Claude Code loads both.
    """,
    bad='{"name": "tools"}', good='{"name": "tools", "version": "1.0.0"}', severity=Severity.INFO,
    profiles=PROFILES, scope="manifest", kinds=NO_KINDS, agnix=("CC-MP-005", "CC-PL-004"),
)
LISTED_SKILL_INVALID = declare(
    "G111", "listed-skill-invalid", "A skill a manifest publishes fails the Agent Skills specification.",
    rationale="""
        Claude Code's plugin validator checks skill frontmatter weakly (it parses the YAML); a
        plugin then ships skills that other clients refuse (a name that is not kebab-case, a
        missing description). The skill's own findings are on its SKILL.md; this one says which
        manifest publishes it. A warning.
    """,
    bad='"skills": ["./skills/PDF Tools"]  (name: PDF Tools)', good='"skills": ["./skills/pdf-tools"]  (name: pdf-tools)',
    severity=Severity.WARNING, profiles=PROFILES, scope="manifest", kinds=NO_KINDS,
)
