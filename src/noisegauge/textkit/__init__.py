"""The text toolkit: sentences, tokens and stems, stopwords, numbers and quantities as typed
values, dates and times of day, names of closed kinds, Korean particles, refusals.

One place for how noisegauge reads text, below the judges: judges, scoring, reports and
stress tests import it; it imports nothing of theirs.

* ``sentences``: the sentence splitter, ``STOPWORDS``, ``content_words``;
* ``tokens``: ``tokenize`` (stems, Korean particles off, numbers, codes), negations, months;
* ``quantity``: ``Quantity`` (value, unit, rates, counted noun) and ``same_quantity``;
* ``names``: months, seasons, weekdays, colours, acronyms, Korean names and titles;
* ``spans``: tokens with their character spans (``spanned``), for diagnostics;
* ``refusal``: sentences that assert nothing (``is_refusal``).
"""
