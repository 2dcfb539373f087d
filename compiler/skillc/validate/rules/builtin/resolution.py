"""Rules emitted while resolving repositories into one namespace (codes R1xx)."""

from .... import resolve_rules
from ..registry import declare

declare(
    resolve_rules.SKILL_SHADOWED, "skill-shadowed", "Two repositories offer the same skill ID; the higher-precedence one wins.",
    rationale="""
        Repositories merge into one namespace. When the same canonical ID comes from two of them, the
        higher priority wins (seed 000 tiers: builtin 1-50, external 51-100, user 101-200, project 201+),
        then the earlier declaration. The loser is not published; the manifest and the site record
        both sources, so an override is never silent.
    """,
    bad="company repo: extraction/email  (shadowed by project repo: extraction/email)",
    good="(informational: rename one of them if both should be published)",
    scope="resolve",
)
declare(
    resolve_rules.DUPLICATE_SKILL_NAME, "duplicate-skill-name", "Two different skill IDs carry the same frontmatter `name`.",
    rationale="""
        IDs are paths, so `a/pdf` and `b/pdf` are different skills; but an agent that lists skills by
        name sees two `pdf` entries and cannot tell them apart. skillc publishes both and warns.
    """,
    bad="tools/pdf/SKILL.md (name: pdf) and legacy/pdf/SKILL.md (name: pdf)",
    good="tools/pdf (name: pdf) and legacy/pdf-v1 (name: pdf-v1)",
    scope="resolve",
)
declare(
    resolve_rules.ID_CASE_COLLISION, "id-case-collision", "Two skill IDs (or collection paths) differ only by letter case.",
    rationale="""
        The bundle stores one file per ID. On case-insensitive filesystems (macOS, Windows) and on
        many static hosts `Tools/pdf` and `tools/pdf` are the same file, so one skill would silently
        replace the other.
    """,
    bad="Tools/pdf and tools/pdf", good="tools/pdf and tools/pdf-legacy", scope="resolve",
)
declare(
    resolve_rules.UNSAFE_SKILL_ID, "unsafe-skill-id", "A skill ID cannot be used safely in a URL or as a file name.",
    rationale="""
        The ID is the URL path segment (`/skills/{quote(id, safe='')}`) and the file name in the
        bundle. Empty, `.` or `..` segments, control characters, `%`, `\\`, characters Windows forbids
        (`<>:"|?*`), names Windows reserves (CON, NUL…), segments ending in a dot or a space, text
        that is not NFC-normalised, and names over 255 bytes once encoded break a host or a client.
    """,
    bad="skills/what?/SKILL.md", good="skills/what-is/SKILL.md", scope="resolve",
)
declare(
    resolve_rules.STALE_SOURCE, "stale-source", "A repository could not be refreshed; the last fetched copy was used.",
    rationale="""
        A branch is re-fetched after `refresh_seconds`. When the fetch fails (network, auth), skillc
        builds from the last successful fetch, like Meerkat's git source, and says so: the bundle may
        be behind the branch.
    """,
    bad="git fetch failed: could not resolve host", good="(fix the network or the credentials)",
    scope="resolve",
)
declare(
    resolve_rules.SUBMODULE_NOT_FETCHED, "submodule-not-fetched", "A git repository holds submodules where its skills are; they are not fetched.",
    rationale="""
        skillc checks out the configured commit and nothing else: a submodule (listed in
        `.gitmodules`) in or above `skills_root` stays an empty folder, so the skills it holds are
        missing from the bundle. Fetching them would reach remotes the configuration never names.
        Add each submodule's repository as a `[[repositories]]` entry of its own, or vendor its
        skills into the repository.
    """,
    bad='.gitmodules: path = skills/vendor-tools   (the build publishes nothing from it)',
    good='[[repositories]] name = "vendor-tools", type = "git", url = "https://…/vendor-tools.git"',
    scope="resolve",
)
declare(
    resolve_rules.REMOTE_SKILL_MISSING, "remote-skill-missing", "A remote registry lists a skill but does not serve its document.",
    rationale="""
        `GET {base}/skills` listed the ID but `GET {base}/skills/{id}` answered 404: the remote
        registry is inconsistent. The skill is left out of the build.
    """,
    bad="GET /api/skills/tools%2Fpdf -> 404", good="GET /api/skills/tools%2Fpdf -> 200",
    scope="resolve",
)
declare(
    resolve_rules.REMOTE_FILE_UNVERIFIED, "remote-file-unverified",
    "A remote skillc bundle lists a skill's file but does not serve it with the listed SHA-256.",
    rationale="""
        From another skillc bundle, the http source fetches every file of a skill (`references/`,
        `scripts/`, `assets/`…) that the bundle's `manifest.json` lists under `api/files/<id>/`,
        and checks each against the manifest's SHA-256 and size. A file that is missing (404),
        differs, or has an unsafe path is left out of the build, so a registry never republishes
        bytes it could not verify; the skill itself is still built.
    """,
    bad="GET /api/files/pdf/references/guide.md -> bytes whose SHA-256 differs from the manifest",
    good="GET /api/files/pdf/references/guide.md -> the bytes the manifest lists",
    scope="resolve",
)
declare(
    resolve_rules.EMPTY_REPOSITORY, "empty-repository", "A configured repository offers no skill.",
    rationale="""
        Usually a wrong `path` or `skills_root`, or include/exclude globs that match nothing; the
        build goes on with the other repositories.
    """,
    bad='skills_root = "skill"   # the folder is skills/', good='skills_root = "skills"',
    scope="resolve",
)
declare(
    resolve_rules.ID_NOT_INVOCABLE, "id-not-invocable", "A skill ID that Meerkat's `/skill-ref` syntax cannot name.",
    rationale="""
        Meerkat invokes a skill from a message that starts with `/<id>`, matched by
        `^/([a-z0-9-]+(?:/[a-z0-9-]+)*)` (seed 004): an ID with capitals, `_`, `.` or other
        characters is published and loads through `load_skill`, but a user can never type it as a
        `/skill-ref`. The ID is the skill's folder path: rename the folders.
    """,
    bad="skills/My_Tools/pdf/SKILL.md (ID My_Tools/pdf)", good="skills/my-tools/pdf/SKILL.md (ID my-tools/pdf)",
    scope="resolve",
)
declare(
    resolve_rules.BUNDLE_PATH_COLLISION, "bundle-path-collision",
    "Two published skills would write the same path in the bundle, or a file where the other needs a folder.",
    rationale="""
        Each skill is published at `api/skills/<encoded id>` (and `.json`), `api/archives/<id>.zip`
        and `api/files/<id>/<path>`. Skills from different repositories can meet there: skill `a`'s
        file `b/x.txt` and skill `a/b`'s `x.txt` are both `api/files/a/b/x.txt`; an ID `index.html`
        is the list's redirect page `api/skills/index.html`; an ID `foo.json` is the `.json` twin of
        skill `foo`. One would silently overwrite the other, so both skills are left out, and the
        build fails (or, with `--keep-going`, lists them as excluded). Rename a folder.
    """,
    bad="repo1: a/SKILL.md, a/b/x.txt   repo2: a/b/SKILL.md, a/b/x.txt",
    good="repo1: a/SKILL.md, a/refs/x.txt   repo2: a/b/SKILL.md, a/b/x.txt",
    scope="resolve",
)
declare(
    resolve_rules.FLAT_NAME_COLLISION, "flat-name-collision",
    "Two skills' folder names give the same flat name; both are published under their whole ID.",
    rationale="""
        Flat readers know a skill by one `[a-z0-9-]` name, not by its ID: the discovery index that
        `npx skills` reads, `skills/<name>/` folders (openskills), Claude Code plugins and the MCP
        skills extension. A skill's flat name is its folder name, lower-cased, with every other
        run of characters as `-` (`skillc.flatnames`). When two IDs give the same leaf
        (`python/testing`, `js/testing`), both are named by their whole ID instead
        (`python-testing`, `js-testing`), which a user typing `--skill testing` will not expect:
        rename one folder if the short name matters. The manifest's `flat_names` lists every name.
    """,
    bad="python/testing/SKILL.md and js/testing/SKILL.md (flat names python-testing, js-testing)",
    good="python/pytest/SKILL.md and js/jest/SKILL.md (flat names pytest, jest)",
    scope="resolve",
)
declare(
    resolve_rules.SITE_PAGE_NOT_RENDERED, "site-page-not-rendered", "A skill's site page could not be rendered within bounds; it shows its body as plain text.",
    rationale="""
        Each page of the docs site is rendered within a time and depth bound (ten seconds, a
        recursion limit below mkdocs' own): Python-Markdown recurses once per nesting level and
        parses runs of `[` in quadratic time, so one hostile body could fail the whole site or
        stall it for minutes. A page that cannot be rendered in bounds keeps its header and shows
        the body as an escaped code block; the rest of the bundle is published as usual.
    """,
    bad="a body of a list nested 250 levels deep, or of 24,000 `[` characters",
    good="a body of ordinary Markdown (nesting a few levels deep)",
    scope="resolve",
)
declare(
    resolve_rules.UNPUBLISHABLE_FILE_NAME, "unpublishable-file-name", "A skill's file has a name that is not UTF-8 text or holds a control character.",
    rationale="""
        Every file's path is written into the skill's JSON document, the manifest, the discovery
        index, its zip and URLs. A name that is not UTF-8 text (bytes a Latin-1 system wrote) has no
        JSON or XML form, and a control character breaks XML 1.0, terminals and logs: the skill is
        not published (with `--keep-going` it is listed as excluded). Rename the file.
    """,
    bad="references/notes\\x01.md", good="references/notes.md",
    scope="resolve",
)
