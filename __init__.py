"""Blender extension entry point (Blender 4.2+): the repository root is the
extension, installed as ``bl_ext.<repository>.oban_import``; everything lives in
the ``oban_import`` package beside this file. No bl_info here: blender_manifest.toml
holds the metadata, and Blender 3.4-4.1 load ``oban_import/`` itself as a legacy
add-on (its own bl_info). Only relative imports, so that this file works under
whatever name Blender gives the extension."""

from .oban_import import register, unregister

__all__ = ["register", "unregister"]
