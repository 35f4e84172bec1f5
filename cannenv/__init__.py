"""cannenv: validated version matrices, host doctor, images and certification for Ascend NPU stacks."""

__version__ = "0.1.0"
