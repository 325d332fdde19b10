"""Error types for what a user of plboost can get wrong, so that they can be told from plboost's own bugs.

A ValueError (a value out of range, a malformed file) or an :class:`InputTypeError` (a value of the wrong type)
raised by plboost is the caller's to fix, and the ``plboost`` command shows it as one line. A plain TypeError
raised by Python itself (an operand of the wrong type deep inside plboost) is a bug: the command shows its
traceback and asks for a report.
"""


class InputTypeError(TypeError):
    """An argument, column or dataset of a type plboost does not take; the message names it."""


class InvalidParameterError(ValueError, InputTypeError):
    """A parameter of a plboost class or function outside what it declares (:mod:`plboost._constraints`).

    Both a ValueError and a TypeError (an :class:`InputTypeError`), as scikit-learn's: a caller that catches
    either for a bad argument catches it."""


class RankerSetupError(BaseException):
    """A ranker asked to fit or score without whole queries (none given, or queries cut between training and
    scoring): no NDCG can come of it, whatever the parameters.

    Derived from BaseException, not Exception, as pytest's outcomes and KeyboardInterrupt are, because the handlers
    it must pass are those of ordinary errors: scikit-learn's searches (``error_score=np.nan``, their default) turn
    an Exception of ``fit`` or ``score`` into a NaN score, and a search whose every score is NaN still reports a
    best candidate. Catch it by name (``except plboost.errors.RankerSetupError``)."""
