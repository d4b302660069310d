"""What every MCP tool group shares: the project, its masking, and names checked against it.

One :class:`ToolState` per server. Each group (project, run, debug tools) masks its
answers and resolves a scenario name or a run id the same way through it, so that a
name is never joined into a path blindly and no answer leaves unmasked.
"""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from runner.errors import UnotestError
from runner.project.index import Project, ProjectIndex
from runner.project.secrets import RunEnvironment, SecretMasker
from runner.protocol import JSONObject
from runner.store.runs import find_run_dir
from unotest.mcp.answers import for_agent

__all__ = ["ToolState"]


class ToolState:
    def __init__(self, root: Path) -> None:
        self.project = Project(root)

    def masker(self) -> SecretMasker:
        """The project's secrets (``unotest/.env``), read again for each answer."""
        masker = SecretMasker()
        RunEnvironment.of_project(self.project.root, masker, {})
        return masker

    def safe(self, data: JSONObject) -> JSONObject:
        masked = self.masker().mask_data(data)
        assert isinstance(masked, dict)  # mask_data copies a dict as a dict
        return masked

    def index(self) -> ProjectIndex:
        return ProjectIndex.load(self.project)

    def scenario_path(self, index: ProjectIndex, name: str) -> tuple[str, str]:
        """(kind, project-relative path) of a scenario or ``_helpers/<name>``.

        A file that does not parse (so is not in the index) is still found by its name:
        the agent must be able to read and check the file it has just broken.
        """
        if (
            not isinstance(name, str)
            or not name
            or "\0" in name
            or "\\" in name
            or any(part in ("", ".", "..") for part in name.split("/"))
        ):
            raise ToolError(f"{name!r} is not a scenario name")
        for meta in index.scenario_metas:
            if meta["name"] == name:
                return "scenario", meta["path"]
        if name.startswith("_helpers/"):
            for helper in index.helpers:
                if f"_helpers/{helper.name}" == name:
                    return "helper", helper.file
            kind, base = "helper", self.project.helpers_dir
            candidate = base / f"{name[len('_helpers/') :]}.js"
        elif name == "_hooks" or name.endswith("/_hooks"):
            # A folder's hooks (shop/_hooks), named as --break names them.
            kind, base = "helper", self.project.e2e_dir
            candidate = base / f"{name}.js"
        else:
            kind, base = "scenario", self.project.e2e_dir
            candidate = base / f"{name}.test.js"
        if (not name.split("/")[0].startswith("_") or kind == "helper") and candidate.is_file():
            resolved = candidate.resolve()
            if resolved.is_relative_to(base.resolve()):
                return kind, self.project.relative(candidate)
        known = ", ".join(m["name"] for m in index.scenario_metas[:20])
        raise ToolError(f"no scenario named '{name}' (known: {known})")

    def run_dir(self, run_id: str) -> Path:
        """The directory of a run id, or of a unique prefix of one."""
        try:
            return find_run_dir(self.project, run_id)
        except UnotestError as err:
            raise ToolError(for_agent(str(err))) from None
