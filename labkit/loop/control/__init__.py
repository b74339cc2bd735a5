"""control: seed 002's control plane around the engine.

Error classes and retry (`classify`), actions with external effects (`effects`), experimental
units (`units`), the protected-test change gate (`test_change`), the bounded tool task
(`bound`), layer metrics (`layer_metrics`) and predictions scored against observations
(`predictions`).
"""
