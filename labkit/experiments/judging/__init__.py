"""judging: worked example C: pairs, judges (real and simulated), bias metrics, intrinsic self-correction."""
