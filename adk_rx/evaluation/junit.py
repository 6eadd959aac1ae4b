"""Eval results as JUnit XML, the report CI systems read (``adk-rx eval --junit FILE``).

One ``<testsuite>`` per eval set and one ``<testcase>`` per eval case (``classname`` the set,
``name`` the case). A case that failed its thresholds has a ``<failure>`` whose message lists
each metric's score against its threshold and whose text shows what differed per turn; a case
that could not run has an ``<error>``; a case no metric could score is ``<skipped>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from adk_rx.evaluation.agent_evaluator import describe_case
from adk_rx.evaluation.case_result import CaseResult, EvalResult
from adk_rx.evaluation.criteria import EvalStatus

__all__ = ["junit_xml", "score_line"]


def score_line(case: CaseResult) -> str:
    """``metric score/threshold`` for each metric, e.g. ``response_match_score 0.42/0.80``."""
    shown = []
    for name, threshold in case.thresholds.items():
        score = case.scores.get(name)
        value = "n/a" if score is None else f"{score:.2f}"
        shown.append(f"{name} {value}/{threshold:.2f}")
    return ", ".join(shown)


def _testcase(suite: ET.Element, set_id: str, case: CaseResult) -> None:
    element = ET.SubElement(
        suite, "testcase", classname=set_id, name=case.eval_id, time=f"{case.seconds:.3f}"
    )
    if case.error is not None:
        error = ET.SubElement(element, "error", message=case.error, type="EvalCaseError")
        error.text = case.traceback or case.error
    elif case.status is EvalStatus.FAILED:
        failure = ET.SubElement(element, "failure", message=score_line(case), type="EvalFailure")
        failure.text = describe_case(case, all_turns=True)
    elif case.status is EvalStatus.NOT_EVALUATED:
        ET.SubElement(element, "skipped", message=f"no metric could score it: {score_line(case)}")
    else:
        ET.SubElement(element, "system-out").text = score_line(case)


def junit_xml(results: Sequence[EvalResult]) -> str:
    """The JUnit XML document of the results (one suite per eval set)."""
    root = ET.Element("testsuites", name="adk-rx eval")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for result in results:
        ran = [c for c in result.cases if c.error is None]
        counts = {
            "tests": len(result.cases),
            "failures": sum(c.status is EvalStatus.FAILED for c in ran),
            "errors": len(result.cases) - len(ran),
            "skipped": sum(c.status is EvalStatus.NOT_EVALUATED for c in ran),
        }
        seconds = sum(c.seconds for c in result.cases)
        attributes = {key: str(value) for key, value in counts.items()}
        attributes.update(name=result.eval_set_id, time=f"{seconds:.3f}")
        suite = ET.SubElement(root, "testsuite", attributes)
        for case in result.cases:
            _testcase(suite, result.eval_set_id, case)
        totals = {key: totals[key] + counts[key] for key in totals}
    root.attrib.update({key: str(value) for key, value in totals.items()})
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
