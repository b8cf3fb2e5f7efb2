"""Export of an identified model: URDF, robot file, JSON, or standalone feed-forward source (docs/export.md)."""

from robid.export.model_export import FORMATS, ModelExport, export_model

__all__ = ["FORMATS", "ModelExport", "export_model"]
