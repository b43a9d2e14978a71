"""The scene after an import: its frame rate and its frame range, as the import's settings
ask (the same for every game)."""


def update_scene(scene, settings, last_frame):
    """With the settings' update_scene_fps, the scene at settings.fps; with
    update_scene_duration, its range extended (never shortened) from settings.frame_start
    to `last_frame`."""
    if settings.update_scene_fps:
        scene.render.fps, scene.render.fps_base = settings.fps, 1.0
    if settings.update_scene_duration:
        scene.frame_start = min(scene.frame_start, settings.frame_start)
        scene.frame_end = max(scene.frame_end, last_frame)
