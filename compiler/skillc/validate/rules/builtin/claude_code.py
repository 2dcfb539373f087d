"""What Claude Code does with a skill's frontmatter at run time (codes F415-F418).

agnix (the Rust lint peer, research/clients.md §5) found these on real repositories where skillc
was silent: tools no agent knows in `allowed-tools` (CC-SK-008), `Bash` pre-approved without an
argument pattern (CC-SK-007), skills with side effects that the model may start on its own
(CC-SK-006), and descriptions that never say when to use the skill (AS-020).  Each rule names the
agnix rules it stands for (``agnix=``), so the coverage table of the rule reference is computed.
"""

from __future__ import annotations

import re

from ....model import ItemKind, Severity
from ..registry import Finding, RuleContext, rule
from .fixes import rename_in_scalar_fix
from .frontmatter import split_tools

REC = frozenset({"recommended"})
SKILL = frozenset({ItemKind.SKILL})
SKILL_AND_LIGHT = frozenset({ItemKind.SKILL, ItemKind.LIGHTWEIGHT})

# Claude Code's built-in tool names (2.1.x), as agnix 0.59.3 lists them in CC-SK-008's message; MCP
# tools are written `mcp__<server>` or `mcp__<server>__<tool>`.
CLAUDE_CODE_TOOLS = frozenset({
    "Agent", "Artifact", "AskUserQuestion", "Bash", "CronCreate", "CronDelete", "CronList", "Edit",
    "EndConversation", "EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "LSP",
    "ListAgents", "ListMcpResourcesTool", "Monitor", "MultiTool", "NotebookEdit", "PowerShell", "PushNotification",
    "Read", "ReadMcpResourceTool", "RemoteTrigger", "ReportFindings", "ScheduleWakeup", "SendMessage",
    "SendMessageTool", "SendUserFile", "ShareOnboardingGuide", "Skill", "StatusBarMessageTool", "SubagentHandback",
    "Task", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate", "TeamCreate", "TeamDelete",
    "TodoRead", "TodoWrite", "ToolSearch", "WaitForMcpServers", "WebFetch", "WebSearch", "Workflow", "Write",
    # Older names Claude Code still accepts in allowed-tools (renamed or folded into others since).
    "MultiEdit", "LS", "NotebookRead", "BashOutput", "KillShell", "KillBash", "SlashCommand",
})
_BY_FOLDED_NAME = {t.lower(): t for t in CLAUDE_CODE_TOOLS}
_MCP_TOOL = re.compile(r"^mcp__[a-z0-9_-]+(?:__[\w.*-]+)?$", re.I)
TOOL_KEYS = ("allowed-tools", "disallowed-tools")


def _tool_entries(value: object) -> list[str]:
    """The entries of an `allowed-tools` value (a string or a list); malformed ones are F406's."""
    if isinstance(value, str):
        entries, _, balanced = split_tools(value)
        return [e for e in entries if e] if balanced else []
    if isinstance(value, list):
        return [e.strip() for e in value if isinstance(e, str) and e.strip()]
    return []


def _tool_name(entry: str) -> str:
    return entry.partition("(")[0].strip()


@rule(
    "F415", "allowed-tools-unknown-tool", "`allowed-tools` names a tool Claude Code does not have.",
    rationale="""
        Claude Code pre-approves the tools `allowed-tools` names and ignores names it does not know,
        so a typo (`Bassh`), another agent's tool (`ask_user`, `sql`) or a product name (`Azure`)
        approves nothing and the skill stops to ask. Known: Claude Code's built-in tools and
        `mcp__<server>[__<tool>]`. A warning in `recommended` only: skills written for another
        agent (Copilot's tool names) are legitimate there, and the `spec` profile does not define
        tool names at all. The fix writes a built-in name in its case (`read` → `Read`: tool names
        are case-sensitive, and no other tool differs only by case), in an unquoted value.
    """,
    bad="allowed-tools: Read Azure", good="allowed-tools: Read mcp__azure__deploy",
    severity=Severity.WARNING, profiles=REC, kinds=SKILL, keys=TOOL_KEYS, agnix=("CC-SK-008",),
    fix="write a built-in tool's name in its case (read → Read)",
)
def allowed_tools_unknown_tool(ctx: RuleContext):
    for key in TOOL_KEYS:
        if key not in ctx.meta:
            continue
        value = ctx.meta[key]
        for i, entry in enumerate(_tool_entries(value)):
            name = _tool_name(entry)
            if not name or name in CLAUDE_CODE_TOOLS or _MCP_TOOL.match(name) or "*" in name:
                continue
            meant = _BY_FOLDED_NAME.get(name.lower())
            if meant is None:
                yield Finding(f"{key} names {name!r}, which is not a Claude Code tool (built-in tools, or "
                              "mcp__<server>__<tool> for MCP tools); the entry approves nothing", ctx.value(key))
                continue
            where = (key, i) if isinstance(value, list) else (key,)
            scalar = ctx.document.frontmatter.scalars.get(where) if ctx.document.frontmatter else None
            yield Finding(f"{key} names {name!r}; Claude Code's tool is {meant!r} (names are case-sensitive, so the "
                          "entry approves nothing)", ctx.value(*where),
                          fix=rename_in_scalar_fix(ctx, scalar, name, meant) if scalar is not None else None)


@rule(
    "F416", "unrestricted-bash", "`allowed-tools` pre-approves `Bash` without an argument pattern.",
    rationale="""
        A bare `Bash` (or `Bash(*)`) in `allowed-tools` lets the skill run any shell command without
        asking while it is active; a pattern (`Bash(git:*)`, `Bash(npm run test:*)`) approves only
        what the skill needs. Info, and in no profile (enable with `extend-select = ["F416"]`):
        some skills do need a shell, and the choice is the author's; a team that wants every
        pre-approved shell scoped turns it on.
    """,
    bad="allowed-tools: Bash Read", good="allowed-tools: Bash(git status:*) Read",
    severity=Severity.INFO, profiles=frozenset(), kinds=SKILL, keys=("allowed-tools",), agnix=("CC-SK-007",),
)
def unrestricted_bash(ctx: RuleContext):
    for entry in _tool_entries(ctx.meta.get("allowed-tools")):
        if entry.replace(" ", "") in ("Bash", "Bash(*)", "Bash(*:*)"):
            yield Finding(f"allowed-tools pre-approves {entry!r}: any shell command runs without asking; scope it "
                          "(Bash(git:*))", ctx.value("allowed-tools"))
            return


# Name words that mean the skill changes something outside the conversation (sends, publishes,
# deploys, commits): agnix CC-SK-006's heuristic, checked on the name's words.
SIDE_EFFECT_WORDS = frozenset({"deploy", "deployment", "release", "publish", "push", "commit", "send", "upload",
                               "email", "post", "tweet", "delete", "destroy", "drop", "migrate", "merge",
                               "rollback", "ship"})
_WORD = re.compile(r"[a-z0-9]+")


@rule(
    "F417", "side-effect-skill-model-invocable",
    "A skill named for a side effect (deploy, release, send, commit…) lacks `disable-model-invocation: true`.",
    rationale="""
        Claude Code starts a skill on its own when its description matches the conversation; for a
        skill that deploys, publishes, sends mail or commits, that means acting without being asked.
        `disable-model-invocation: true` keeps it for `/name` only. The skill's name words are
        checked (agnix's heuristic): info, and in no profile (enable with `extend-select =
        ["F417"]`), since a name word is a guess (`release-notes` only writes text) and the
        judgement is the author's; no fix is offered because setting the key changes how the skill
        is used.
    """,
    bad="name: deploy-staging", good="name: deploy-staging\ndisable-model-invocation: true",
    severity=Severity.INFO, profiles=frozenset(), kinds=SKILL, keys=("name",), agnix=("CC-SK-006",),
)
def side_effect_skill(ctx: RuleContext):
    name = ctx.meta.get("name")
    if not isinstance(name, str) or ctx.meta.get("disable-model-invocation") is True:
        return
    words = set(_WORD.findall(name.lower()))
    hit = sorted(words & SIDE_EFFECT_WORDS)
    if hit:
        yield Finding(f"skill {name.strip()!r} looks like it acts on the world ({hit[0]}) and Claude may start it on "
                      "its own; set 'disable-model-invocation: true' to run it only when asked", ctx.value("name"))


# "Use when…", "Use this for…", "Triggers on…", "…if the user asks": a when-to-use clause (searched in
# the lower-cased description: a case-insensitive pattern is slower).
_TRIGGER = re.compile(r"\b(?:when|whenever|use (?:it |this |this skill )?(?:for|to|on|if|after|before|with)|"
                      r"use this|triggers?|invoke|if (?:the )?user|if you|for (?:tasks|requests|questions))\b")
# A word each of _TRIGGER's alternatives contains: a description holding none (the ones F418
# reports) is decided by a few substring searches instead of the regex tried at every position.
_TRIGGER_WORDS = ("when", "use", "trigger", "invoke", "if ", "for ")


@rule(
    "F418", "description-without-trigger", "`description` says what the skill does but never when to use it.",
    rationale="""
        Agents pick a skill by its description alone; one that names no situation ("Helps with
        PDFs.") is chosen late or never. Anthropic's guidance: say what it does and when to use it
        ("Use when…"). Info, and in no profile (enable with `extend-select = ["F418"]`): a word
        heuristic, and most descriptions in the wild are written without the clause.
    """,
    bad="description: Helps with PDFs.",
    good="description: Extract text and tables from PDFs. Use when the user mentions PDFs or forms.",
    severity=Severity.INFO, profiles=frozenset(), kinds=SKILL, keys=("description",), agnix=("AS-020",),
)
def description_without_trigger(ctx: RuleContext):
    description = ctx.meta.get("description")
    if not isinstance(description, str) or not description.strip():
        return
    low = description.lower()
    if not any(word in low for word in _TRIGGER_WORDS) or not _TRIGGER.search(low):
        yield Finding("the description never says when to use the skill; add a 'Use when…' clause",
                      ctx.value("description"))


# The values Claude Code 2.1 accepts for its frontmatter keys (agnix 0.59.3 lists the same).  A model
# may also be a full model ID (`claude-…`).
CLAUDE_CODE_VALUES: dict[str, tuple[str, ...]] = {
    "context": ("fork",),
    "shell": ("bash", "powershell"),
    "effort": ("low", "medium", "high", "xhigh", "max"),
    "model": ("default", "best", "fable", "sonnet", "opus", "haiku", "opusplan", "sonnet[1m]", "opus[1m]", "inherit"),
}


@rule(
    "F419", "claude-code-value-invalid", "`model`, `context`, `effort` or `shell` has a value Claude Code does not accept.",
    rationale="""
        Claude Code reads these keys from SKILL.md: `context` is `fork` or absent, `shell` is `bash`
        or `powershell`, `effort` one of `low`, `medium`, `high`, `xhigh`, `max`, and `model` an
        alias (`sonnet`, `opus`, `haiku`, `inherit`…) or a `claude-…` model ID. Another value
        (`model: gpt-4`, `context: inline`) is ignored or refused when the skill runs. A warning in
        `recommended`; F413 reports a value that is not text at all.
    """,
    bad="model: gpt-4", good="model: sonnet",
    severity=Severity.WARNING, profiles=REC, kinds=SKILL, keys=tuple(CLAUDE_CODE_VALUES),
    agnix=("CC-SK-001", "CC-SK-002", "CC-SK-018", "CC-SK-020"),
)
def claude_code_value_invalid(ctx: RuleContext):
    for key, allowed in CLAUDE_CODE_VALUES.items():
        value = ctx.meta.get(key)
        if not isinstance(value, str) or value in allowed or (key == "model" and value.startswith("claude-")):
            continue
        extra = " or a claude-… model ID" if key == "model" else ""
        yield Finding(f"{key} {value!r} is not a value Claude Code accepts (one of {', '.join(allowed)}{extra})",
                      ctx.value(key))


@rule(
    "F420", "agent-without-fork-context", "`agent` is set without `context: fork`.",
    rationale="""
        Claude Code runs a skill in a subagent (`agent: Explore`) only in a forked context; without
        `context: fork` the `agent` key is ignored and the skill runs inline. A warning in
        `recommended`.
    """,
    bad="agent: Explore", good="context: fork\nagent: Explore",
    severity=Severity.WARNING, profiles=REC, kinds=SKILL, keys=("agent",), agnix=("CC-SK-004",),
)
def agent_without_fork_context(ctx: RuleContext):
    if isinstance(ctx.meta.get("agent"), str) and ctx.meta.get("context") != "fork":
        yield Finding("'agent' is ignored without 'context: fork'; add it, or remove 'agent'", ctx.value("agent"))
