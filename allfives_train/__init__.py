"""Self-play training of the All Fives policy (``python train.py``): config, rollouts, PPO, checkpoints, logs."""
