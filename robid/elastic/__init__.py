"""Elastic joints: modal analysis of the linearised closed loop (:mod:`robid.elastic.modal`)."""

from robid.elastic.modal import LinearisedModel, ModalResult, linearise, modal_analysis

__all__ = ["LinearisedModel", "ModalResult", "linearise", "modal_analysis"]
