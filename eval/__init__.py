"""Measurement: the IR, QA and full-system evaluations on a question set (default: eval/questions.txt).

Entry point: ``run_eval(EvalOptions(...), config) -> EvalReport``; ``jarvis eval`` calls it.
"""
from jarvis.eval.metrics import best_em, best_f1, exact_match, f1_score, normalize_answer
from jarvis.eval.questions import Question, QuestionFileError, load_questions, parse_questions
from jarvis.eval.eval_report import EvalReport
from jarvis.eval.runner import EvalOptions, run_eval

__all__ = ["EvalOptions", "EvalReport", "Question", "QuestionFileError", "best_em", "best_f1", "exact_match",
           "f1_score", "load_questions", "normalize_answer", "parse_questions", "run_eval"]
