# level12 (tests/data/cutscene): a short cutscene over what the level holds.
# Cameras OBANcut_cam_a (40 frames), OBANcut_cam_b (25), OBANcut_cam_wide (60: a wide shot
# of the room, not played here); character box OBANcut_box (30);
# placed objects 21 (static), 22 (OBANcut_lift_anim, looping, 48), 23 (OBANcut_door_anim, 20);
# gunk script ids 11 and 12 (two quads each); flags 7001, 7002; FILM cut_walk;
# dialogue cut_line1 (90 ticks), cut_line2 (30 ticks).

var int cut_running = 0;

func void cut_props(void)
{
	env_setanim 23 cut_door_anim
	env_anim 22 23
	sleep 20
	obj_kill 21
	sleep 10
	obj_create 21
}

func void cut_intro(void)
{
	cut_running = 1;
	begin_cutscene
	chr_teleport 0 7001
	env_show 12 0
	cm_anim both cut_cam_a
	fork cut_props
	sound_dialog_play_block cut_line1
	chr_envanim 0 cut_box norotation
	cm_interpolate cut_cam_b 25
	chr_animate griffin char0_walk00
	sound_dialog_play cut_line2
	sleep 10
	env_show 11 0
	env_show 12 1
	sleep(25);
	playback griffin cut_walk
	cut_running = 0;
	end_cutscene
}

func void main(void)
{
	cut_intro
}
