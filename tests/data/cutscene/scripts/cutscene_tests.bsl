# This project's own scripts over level12 (tests/oni/blender/test_cutscene.py): each
# function moves one kind of thing, with every statement of docs/cutscenes.md 1-5.

var int shots_done = 0;

func void shots(void)
{
	cm_anim both cut_cam_a
	cm_wait
	cm_interpolate cut_cam_b 30
	sleep 40
	cm_anim_block both cut_cam_b
	cm_wait
	cm_reset
	shots_done = shots_done + 1;
}

func void actors(void)
{
	chr_teleport 0 7002
	sleep 5
	chr_envanim 0 cut_box
	chr_animate 0 char0_walk00
	sleep f40
	chr_envanim_block 0 cut_box norotation
	chr_animate 0 char0_punch02 60
	ai2_spawn griffin
	chr_teleport griffin 7001
	sleep 30
	chr_delete griffin
	sleep 10
}

func void props(void)
{
	obj_create 21 23
	env_setanim 23 cut_door_anim
	env_anim 22
	sleep 10
	env_show 11 0
	env_setanim_block 23 cut_door_anim
	sleep 15
	obj_kill 21
	env_show 11 1
	env_show 12 0
	sleep 30
}

func void talk(void)
{
	sound_dialog_play cut_line1
	sound_dialog_play cut_line2
	sound_dialog_play_block pause
	sound_dialog_play_block cut_line2
	fade_out 0 0 0 30
	sleep 20
	if (shots_done eq 0) {
		letterbox 1
	} else {
		letterbox 0
	}
	ai2_dopath griffin patrol_1
	sound_dialog_play cut_missing_line
	sleep 10
}

func void stranger(void)
{
	chr_envanim visitor cut_box
	sleep 10
}

# The README's picture (tools/render_pictures.py cutscene): a shot of cut_cam_wide over the
# player's box animation and the props.
func void picture(void)
{
	obj_create 21 23
	env_anim 22
	env_setanim 23 cut_door_anim
	cm_anim both cut_cam_wide
	chr_envanim 0 cut_box norotation
	chr_animate 0 char0_walk00
	cm_wait
}

func void missing(void)
{
	cm_anim both cut_cam_a
	sleep 10
	cm_anim both no_such_shot
	sleep 10
	playback 0 no_such_film
	playback_block griffin cut_walk
	sleep 5
}
