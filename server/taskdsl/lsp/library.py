"""The project as the server sees it: the workspace folders, the library index (built in a
background thread at start-up and on request, then updated file by file as documents are edited
and watched files change), the file watchers it asks the client for, and the project's
configuration (taskdsl.toml / [tool.taskdsl]) with the editor's settings laid over it, read again
when it changes. ``ProjectIndex`` is a part of ``TaskdslServer``; the notifications that feed it
are handled in ``documents``."""

from __future__ import annotations

import asyncio
import functools
import gc
import os

from lsprotocol import types

from taskdsl.project import config
from taskdsl.features.util import path_to_uri, uri_to_path
from taskdsl.lsp.state import log
from taskdsl.project.settings import Settings, overlay

# The functions below take the server as ``ls: TaskdslServer``; the name is not imported, as
# ``taskdsl.lsp.server`` imports this module (annotations are not evaluated).


class ProjectIndex:
    """The library and configuration half of ``TaskdslServer``."""

    def roots(self) -> list[str]:
        folders = [uri_to_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        return [f for f in folders if f]

    def update_library(self, path: str | None, text: str | None, *, removed: bool = False) -> list[str]:
        """Update one file's entries; the open documents (uris) whose references changed."""
        library = self.state.library
        if library is None or path is None:
            return []
        try:
            affected = library.remove_file(path) if removed else library.update_file(path, text)
        except Exception:
            self.log_failure("library")
            return []
        self.state.generation += 1
        affected_uris = {path_to_uri(str(p)) for p in (affected or [])}
        return [uri for uri in self.workspace.text_documents if uri in affected_uris]

    # -- project configuration (taskdsl.toml / [tool.taskdsl]) ------------------------------

    def set_editor_settings(self, editor: Settings) -> None:
        self.state.editor_settings = editor
        self.state.settings = overlay(config.project_settings(self.state.config), editor) \
            if self.state.config is not None else editor

    def load_config(self, unsaved: dict[str, str] | None = None) -> bool:
        """(Re)read the project's configuration (an open buffer wins over the file) and publish its
        problems. True when the settings changed."""
        roots = self.roots()
        if not roots:
            return False
        try:
            self.state.config = config.load_config(config.project_root(roots[0]), unsaved)
        except Exception:
            self.log_failure("configuration")
            return False
        before = self.state.settings
        self.set_editor_settings(self.state.editor_settings)
        self.publish_config()
        from taskdsl.lsp.memory import publish_index

        publish_index(self)  # the memory index is checked as the configuration is
        changed = self.state.settings != before
        if changed:
            self.state.generation += 1
        return changed

    def config_edited(self, uri: str, text: str | None) -> None:
        """A config file was opened, edited, saved or closed: read it again, re-check what it changes."""
        path = uri_to_path(uri)
        roots = self.roots()
        if not path or not roots or os.path.dirname(path) != str(config.project_root(roots[0])):
            return  # another folder's file: not this project's configuration
        before = self.state.settings
        self.load_config({path: text} if text is not None else None)
        if self.state.settings != before:
            library_inputs = ("files", "library_paths", "exclude")
            if any(getattr(before, k) != getattr(self.state.settings, k) for k in library_inputs):
                asyncio.ensure_future(build_library(self))
            else:
                self.recheck_open()


async def pull_settings(ls: TaskdslServer) -> bool:
    workspace = ls.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return False
    try:
        result = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="taskdsl")]))
    except Exception:
        log.warning("workspace/configuration failed; keeping the current settings", exc_info=True)
        return False
    section = result[0] if result else None
    editor = ls.state.editor_settings.updated(section) if isinstance(section, dict) else ls.state.editor_settings
    before = ls.state.settings
    ls.set_editor_settings(editor)
    return ls.state.settings != before


async def register_watchers(ls: TaskdslServer) -> None:
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in ls.state.settings.files]
    watchers += [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in config.CONFIG_NAMES]
    from taskdsl.lsp.memory import location

    found = location(ls)
    if found is not None:  # the memory index (its problems; TD308 when it appears or goes)
        watchers.append(types.FileSystemWatcher(glob_pattern=f"**/{os.path.relpath(found[1], found[0])}"))
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[types.Registration(
            id="taskdsl-watch-templates", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
    except Exception:
        log.warning("the client refused the file watcher; the library follows open documents only")


async def build_library(ls: TaskdslServer) -> None:
    try:
        from taskdsl import library as library_module
    except ImportError:
        return
    window = ls.client_capabilities.window
    token = None
    if window and window.work_done_progress:
        token = f"taskdsl-index-{id(ls)}-{ls.state.generation}"
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title="taskdsl: indexing templates", percentage=0))
        except Exception:
            token = None
    try:
        roots = ls.roots()  # discovery adds the settings' libraryPaths (workspace.discover)
        loop = asyncio.get_running_loop()
        ls.state.library = await loop.run_in_executor(
            None, functools.partial(library_module.Library.from_paths, roots, settings=ls.state.settings))
        for uri in list(ls.workspace.text_documents):  # open documents win over their files on disk
            path = uri_to_path(uri)
            if path and not config.is_config_file(path):
                ls.state.library.update_file(path, ls.workspace.get_text_document(uri).source)
        ls.state.generation += 1
        # The index lives as long as the server: keep the cyclic GC from walking it on every full
        # collection (a 5,000-template index is most of the heap). It holds no reference cycles,
        # and reference counting still frees whatever a later update replaces.
        gc.collect()
        gc.freeze()
    except Exception:
        ls.log_failure("library")
    finally:
        ls.state.indexing = False  # built (or failed: then every document is checked alone)
        ls.state.generation += 1
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="indexed"))
    ls.recheck_open()

