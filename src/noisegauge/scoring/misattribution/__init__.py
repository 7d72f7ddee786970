"""Misattributed noise: a wrong detail carried from one entity's chunk onto another.

"The Pro plan needs a 90-day notice", when only the Enterprise chunk says 90 days, is wrong
and entailed by no chunk, so RAGChecker's algebra counts it as hallucination. It was not
made up, though: the detail that makes it wrong was read in a chunk about another entity.
Such a claim gets ``misattributed_from`` (the chunks) with the matched span, and the sample
the diagnostic ``noise_misattribution`` (share of response claims). The eleven metrics and
their algebra never change; this is a diagnostic beside them.

Offline, token alignment decides (the lexical judge's tokens: stems, numbers with units,
product codes, months). A hallucinated claim is misattributed from chunk ``j`` when

1. it has a *distinguishing detail*: its numbers (with units), codes, months or names
   (capitalised, quoted — "캐릭터 '소율'" — or a Korean name before a title: "박서연
   교수님") that neither the reference nor the question state ("unlimited" and "no limit"
   count as a value, and so does "free" however it is said — "no extra charge", "수수료
   없이" — where nothing else is), else at least two such content words; not the numbers
   the asked entity's own chunk states ("... and 20 hours with the case") while another
   remains ("free" remains: "no monthly fee, and you can open it with just $25"), nor "one"
   counting a plain noun ("a single charge"; "eight players" is a detail), nor a bare
   number the reference says ("two visitors" / "two at a time"); where the reference denies what the claim asserts ("the R3 has no mop" / "the R3
   mops"; a "No, ..." answer to a yes/no question), the denied words are the detail, and a
   "Yes, ..." claim against a "No, ..." reference is denied all it asserts past the
   reference's first clause ("Yes, Basic includes SAML SSO" / "No. Basic uses password
   login only; SAML SSO is on the Business tier");
2. a *window* of chunk ``j`` (a sentence, two adjacent ones, or a clause of a sentence that
   turns to another entity: "...; ...", ", while ...", "반면") states that detail: every
   number, code or name and half of the other words (rounded down; none beside a *specific*
   detail: an amount with a unit, a number of three digits, a code, a two-word name), or,
   without numbers or names, two thirds of the words and at least two (half, at least one,
   where the window swaps the entity, below). One value said two ways is one: weekdays
   written short in a list ("Mon, Wed, Fri", "월·수·금"), "three times a week" and "3 days
   per week", "two days" and "48 hours", "free" and "$0". A number or name the window lacks
   may be stated by another chunk ("Under the current Stage 2 restrictions, North residents
   may water three times a week": a notice's "Stage 2", the South district's "3 days per
   week") when the window states the telling part (a specific value, not only a name), what
   is missing is no code ("AF19보다 ... 1등급" compares), and no one chunk states them all;
3. that window is *about another entity*: it lacks a word the claim shares with the question
   or the reference (the asked entity, "Pro") or the asked numbered entity ("1학기"), or
   names a variant of it ("Lumo Reader Pro" for the "Lumo Reader"); shares another of the
   claim's content words (the
   same topic; not needed for a specific detail or a swap), and names something the claim,
   question and reference do not;
4. the claim does not name what the window is about: the words of its heading ("Enterprise
   plan:") or of its chunk's title line ("Aero 15 specs"), else its first word the question
   and reference do not state ("Our head of *sales* is ..."); a carried person ("재활의학과
   | 박서연 교수") is not what it is about, a number after the word that numbers the asked
   entity is another entity ("the 1.7 kg Aero 15" beside the asked "Aero 13"), and a capital
   letter after a name is part of it ("Zip S"). A claim that does ("Unlike version 4.2,
   version 5.0 gets updates until 2028") states that entity's fact: noise or a comparison,
   not a misattribution.

Misattribution is only across entities. In the asked entity's own chunk (it states the
reference sentence nearest the claim and the names the claim shares with the question) a
window is another entity's only where one stands in the asked one's place ("Residents of
Birch Tower" for "Maple Court residents"; a variant or another number of it): a stale or
other-case sentence there ("Legacy rule from Billing Policy v2: Pro cancellations require a
60-day notice period" beside v3's 30 days, a 2023 FAQ line) is a conflict inside the chunk,
noise by the algebra, not misattributed.

A detail found nowhere (a true hallucination: "45-day", "NG-TM-M") is never flagged.

A claim that denies ("방문 설치도 지원되지 않습니다") is not carried from a window that asserts,
unless its detail is a number or name ("up to 60 minutes without extra charges").

A wrong claim the judge reads as *entailed* by chunk ``j`` ("Northwind's chief financial
officer is David Kim" under "Northwind's chief technology officer is David Kim") counts as
noise by the algebra, and stays so; it also gets ``misattributed_from`` when, besides 1-4,
the window *swaps the entity*: a word of the question or reference that the window lacks
stands beside the same word as a window word no claim, question or reference states
("chief financial officer" / "chief technology officer", "일반 회원" / "VIP 회원"), or the two
are of one closed kind (colours, acronyms, seasons, weekdays), or the window is about
something the claim does not name (4: "Adult library cards: ...") and lacks what it asks.
When no such window is found and no chunk read as entailing it states the detail (the judge
read it loosely: "김지현 팀장님이 승인" under "박성민 팀장이 경비 정산을 승인"), every chunk is
looked at as for a hallucination; a chunk read as entailing it that states the detail of the
asked entity ("Monday to Friday" where the reference says "weekdays") means it was read
there: not misattributed.
"""

from .detail import Detail, distinguishing_detail
from .find import MAX_SPAN, find_misattributions

__all__ = ["MAX_SPAN", "Detail", "distinguishing_detail", "find_misattributions"]
