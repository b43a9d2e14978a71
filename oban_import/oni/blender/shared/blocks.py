"""The meshes, materials and images of one import, each made once however many files and
objects of the batch use it, by the name Oni gives it (a level and the loose `.oni` files it
links to reach the same texture): an image and a material per texture, a mesh per set of
M3GM parts. What a file that failed had made is forgotten with it."""

import contextlib

import bpy

from ....blender.datablocks import Snapshot
from .images import new_image, pack
from .materials import UNTEXTURED, environment_material, environment_template, new_material
from .meshes import new_mesh


class SharedBlocks:
    def __init__(self, settings):
        self.settings = settings
        self.images, self.materials, self.meshes, self.templates = {}, {}, {}, {}
        self.unpacked = {}     # texture name -> (image, texture): made, pixels not packed yet
        self.added = []        # (dictionary, key) in the order they were made

    @contextlib.contextmanager
    def all_or_nothing(self):
        """What is made inside, all of it or, when it fails (re-raised), none: the data blocks made
        since are removed (a snapshot's look at every block) and forgotten here."""
        snapshot, mark = Snapshot(), self.mark()
        try:
            yield
        except BaseException:
            snapshot.remove()
            self.forget_since(mark)
            raise

    def mark(self) -> int:
        """Where the blocks made from now on begin, for forget_since."""
        return len(self.added)

    def forget_since(self, mark: int) -> None:
        """Forget the blocks made since `mark` (their file failed and removes them)."""
        for dictionary, key in self.added[mark:]:
            dictionary.pop(key, None)
        del self.added[mark:]

    def mesh(self, parts, unnamed="mesh"):
        """The mesh of these M3GM parts (oni.io.objects.Mesh), each with its material, named
        after them ('obj_part0+obj_part1'), or `unnamed`; unnamed parts are told apart by
        what they are."""
        key = tuple(part.name or id(part) for part in parts)
        if key not in self.meshes:
            name = "+".join(part.name for part in parts if part.name) or unnamed
            self._add(self.meshes, key, new_mesh(name, parts, [self.material(p) for p in parts],
                                                 self.settings.axes, self.settings.global_scale))
        return self.meshes[key]

    def material(self, part):
        """The material of a part's texture; for none, or one not found, an untextured one
        named after it."""
        texture = part.texture
        name = texture.name if texture is not None else part.texture_name or UNTEXTURED
        if name not in self.materials:
            self._add(self.materials, name, new_material(name, texture, self.image(texture) if texture else None))
        return self.materials[name]

    def environment_material(self, texture, name, transparent, two_sided):
        """The material of environment quads of this texture (None: not found, `name` says
        which) drawn this way: a copy of its kind's template (made once, removed by
        remove_templates)."""
        key = ("environment", name, transparent, two_sided)
        if key not in self.materials:
            kind = (texture is not None, transparent, two_sided)
            if kind not in self.templates:
                self._add(self.templates, kind, environment_template(*kind))
            self._add(self.materials, key, environment_material(self.templates[kind], kind, name, texture,
                                                                self.image(texture) if texture else None))
        return self.materials[key]

    def remove_templates(self):
        """The templates materials were copied from (they are not used)."""
        for template in self.templates.values():
            bpy.data.materials.remove(template)
        self.templates.clear()

    def image(self, texture):
        """The image of a texture (its pixels packed by pack_images)."""
        if texture.name not in self.images:
            self._add(self.images, texture.name, new_image(texture))
            self._add(self.unpacked, texture.name, (self.images[texture.name], texture))
        return self.images[texture.name]

    def pack_images(self, pngs=None):
        """Pack the pixels of every image made since the last call; `pngs(texture)` gives a
        texture's PNG when made beforehand (images.Encoders), or None."""
        for image, texture in self.unpacked.values():
            pack(image, texture, pngs(texture) if pngs else None)
        self.unpacked.clear()

    def _add(self, dictionary, key, block):
        dictionary[key] = block
        self.added.append((dictionary, key))
