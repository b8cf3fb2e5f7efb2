"""Report sections: one class per section, each owning its template (docs/report.md)."""

from robid.report.sections.data_quality import DataQualitySection
from robid.report.sections.elastic import ElasticSection
from robid.report.sections.estimators import EstimatorsSection
from robid.report.sections.excitation import ExcitationSection
from robid.report.sections.friction import FrictionSection
from robid.report.sections.friction_models import FrictionModelsSection
from robid.report.sections.model import ModelSection
from robid.report.sections.overview import OverviewSection
from robid.report.sections.parameters import ParametersSection
from robid.report.sections.references import ReferencesSection
from robid.report.sections.summary import SummarySection
from robid.report.sections.torque import TorqueSection


def default_sections() -> list:
    """The sections of a robid report, in order."""
    return [
        OverviewSection(),
        SummarySection(),
        ModelSection(),
        ExcitationSection(),
        DataQualitySection(),
        ParametersSection(),
        TorqueSection(),
        ReferencesSection(),
        EstimatorsSection(),
        FrictionSection(),
        FrictionModelsSection(),
        ElasticSection(),
    ]


__all__ = [
    "DataQualitySection",
    "ElasticSection",
    "EstimatorsSection",
    "ExcitationSection",
    "FrictionModelsSection",
    "FrictionSection",
    "ModelSection",
    "OverviewSection",
    "ParametersSection",
    "ReferencesSection",
    "SummarySection",
    "TorqueSection",
    "default_sections",
]
