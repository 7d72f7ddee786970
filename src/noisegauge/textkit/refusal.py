"""Sentences that assert nothing about the world: refusals, hedges, redirections, sign-offs.

"I couldn't find any information about X", "I can't confirm whether X", "Please check with
your account manager", "죄송하지만 확인할 수 없습니다", "고객센터로 문의해 주세요": an answer
that declines states no fact, so it yields no claim (a pure refusal then scores *undefined*,
never hallucination). The patterns are built from a few parts rather than listed phrasings:

* a speaker ("I", "we") who does not know, find, confirm, see... or has no information;
* the sources talking about themselves ("the provided documents do not mention X",
  "no information about X is provided", "it is unclear from the context whether X");
* a redirection to a person or channel ("please contact support", "you may want to ask
  your IT department", "I'd recommend checking the official website") with no contact
  detail of its own (an address or a number is something a document can state);
* sign-offs ("Let me know if...", "I hope this helps", "Is there anything else...?").

A sentence about the product that happens to be negative ("We don't offer refunds after 30
days", "연간 요금제는 환불할 수 없습니다") is a claim: the verbs that make a refusal are
verbs of knowing and telling, and the objects are information, not the product.
"""

from __future__ import annotations

import re

__all__ = ["is_refusal"]

# Openers that add politeness, not content ("Sorry, ...", "Unfortunately, ...").
_OPEN = (r"^(?:(?:sorry|i'm sorry|i am sorry|so sorry|apologies|my apologies|unfortunately|"
         r"regrettably|honestly|to be honest|i'm afraid|i am afraid|i fear|well|hmm|however|but|"
         r"so|ok|okay|currently|at the moment|at this time|right now|as of now|at present|"
         r"for now|sadly)[,.!]?\s+)*")
_NOT = (r"(?:do not|don't|dont|did not|didn't|does not|doesn't|can ?not|can't|cant|could not|"
        r"couldn't|will not|won't|would not|wouldn't|was not able to|wasn't able to|"
        r"(?:am|'m|are|'re|were|was) (?:not |un)able to|weren't able to|have not been able to|"
        r"haven't been able to|failed to|unable to|not able to|have not|haven't|had not|hadn't)")
_SPEAKER = r"(?:i|we)"
_INFO = (r"(?:information|info|details?|data|answer|answers|specifics|figures|record|records|"
         r"knowledge|idea|clue|visibility|insight|access|documentation|guidance|confirmation|mention|"
         r"way (?:to|of) (?:know|tell|check|confirm|verify))")
# Verbs of knowing and telling: what a refusal denies doing.
_KNOW = (r"(?:know|find|found|locate|see|spot|confirm|verify|tell|say|determine|answer|comment|"
         r"speak to|guarantee|identify|retrieve|look up|figure out|be sure|be certain|"
         r"give (?:you )?(?:a |an )?(?:\w+ )?answer|"
         r"(?:provide|share|offer|give|get|have|got|hold|possess)(?: you)?(?: with)? "
         r"(?:any |enough |the |much |more |further |specific |detailed |sufficient |"
         r"reliable |accurate |exact |precise |definitive |clear |an? |that |this )*"
         + _INFO + r"|(?:provide|share|give)(?: you)? (?:that|this|it)\b|"
         r"(?:help|assist)(?: you)?(?: with)? (?:that|this|it|you|your (?:request|question))\b)")
_SOURCE = (r"(?:(?:the|these|those|this|my|any|our|your)\s+)?(?:(?:provided|retrieved|given|"
           r"available|above|supplied|attached|referenced|current|shared)\s+)?"
           r"(?:context|documents?|docs|sources?|passages?|texts?|materials?|excerpts?|snippets?|"
           r"search results|results|knowledge base|articles?|information (?:provided|given|"
           r"available)|documentation (?:provided|given|available|i have))")
_TELL = (r"(?:mention|say|says|specify|state|contain|include|provide|address|cover|indicate|tell|"
         r"discuss|describe|explain|give|answer|list|reference|clarify|show)")
_AGENT = (r"(?:support|team|department|manager|representative|rep|administrator|admin|"
          r"service|desk|helpdesk|sales|vendor|provider|seller|it|us|someone|specialist|agent|"
          r"staff|provider|office|doctor|lawyer|accountant|bank|company|website|site|page|"
          r"documentation|docs|source|sources|portal|owner)")
_REDIRECT_VERB = (r"(?:contact\w*|check\w* with|reach\w* out(?: to)?|get\w* in touch with|"
                  r"consult\w*(?: with)?|ask\w*|call\w*|email\w*|e-mail\w*|speak\w* (?:to|with)|"
                  r"talk\w* to|refer\w* to|verify\w*(?: this| that| it)? with|"
                  r"confirm\w*(?: this| that| it)? with|visit\w*|check\w*|look\w* at|"
                  r"see|follow\w* up with)")

_EN = re.compile("|".join([
    # The speaker does not know / cannot find / has no information.
    _OPEN + _SPEAKER + r"(?: really| honestly| actually| just| currently| still)?\s?" + _NOT
    + r" (?:\w+ )?" + _KNOW,
    _OPEN + _SPEAKER + r"(?:'ve| have| had)? (?:no|zero) " + _INFO,
    _OPEN + _SPEAKER + r"(?:'m| am|'re| are| was| were) not (?:\w+ )?(?:sure|certain|aware|"
    r"positive|confident|in a position)",
    _OPEN + _SPEAKER + r" (?:can't|cannot|can not|couldn't) (?:\w+ )?say\b",
    # The sources talk about themselves.
    r"\b(?:there is|there's|there are|there was|there were) (?:no|not any|not enough) "
    r"(?:\w+ ){0,2}" + _INFO,
    r"^no (?:\w+ ){0,2}(?:information|info|details|data|mention|answer)\b(?: \w+){0,8} "
    r"(?:is|are|was|were|can be|could be) (?:\w+ )?(?:provided|given|available|mentioned|"
    r"included|found|listed|stated|specified)",
    r"\b(?:none|nothing) (?:of|in) " + _SOURCE + r"\b",
    r"\b" + _SOURCE + r" (?:do|does|did) ?(?:not|n't) (?:\w+ )?" + _TELL,
    r"\b(?:is|are|was|were|'s)(?: not|n't) (?:\w+ ){0,2}(?:mentioned|stated|specified|covered|"
    r"included|provided|given|available|listed|found|addressed|described|discussed|clear|"
    r"explained|indicated) (?:in|from|by|within|anywhere in) " + _SOURCE + r"\b",
    r"\b(?:it is|it's|it was|this is|that is) (?:not |n't )?(?:clear|unclear|not clear)"
    r"(?: \w+){0,2} (?:from|in|based on) " + _SOURCE,
    r"\bnot something " + _SOURCE + r" " + _TELL,
    r"\b(?:outside|beyond) (?:what|the scope of what) (?:i|we) (?:can|could|know)",
    # An apology on its own.
    r"^(?:i'm |i am |we're |we are |so |very |really )*(?:sorry|apologies|my apologies|"
    r"unfortunately)[.!]?$",
    # Sign-offs and offers of more help.
    r"\blet (?:me|us) know if\b|\bfeel free to\b|\b(?:i |we )?hope (?:this|that|it) "
    r"(?:helps|answers|clarifies|was helpful)|\bis there anything else\b|\banything else "
    r"(?:i|we) can\b|\bhelp you with anything else\b|\b(?:happy|glad) to help\b|"
    r"\bif you have (?:any )?(?:other|more|further|additional) questions\b|"
    r"\bthanks? (?:you )?for (?:asking|reaching out|your question)",
]), re.IGNORECASE)

# Redirections to a person or a channel.
_EN_REDIRECT = re.compile("|".join([
    r"^(?:(?:for|if|regarding|about) (?:\w+ ){0,6}\w+[,:]\s+)?(?:please |kindly )?"
    + _REDIRECT_VERB + r" (?:\w+ ){0,3}" + _AGENT + r"\b",
    r"^(?:you|you'll|you will|you may|you might|you could|you should|you'd|you would|it "
    r"(?:is|would be|might be|may be) (?:best|better|advisable|wise)(?: to)?)(?: \w+)?"
    r"(?: want to| need to| have to| wish to| like to| to)? " + _REDIRECT_VERB,
    r"^" + _SPEAKER + r"(?: would|'d)? (?:recommend|suggest|advise|encourage|urge)(?: you)?"
    r"(?: to)? " + _REDIRECT_VERB,
]), re.IGNORECASE)

# Something a document can state: a number, an address, a link.
_CONTACT = re.compile(r"\d|\S+@\S+\.\w+|https?://|www\.", re.IGNORECASE)

_KO_AGENT = (r"(?:고객\s*센터|고객\s*지원\s*팀|고객\s*지원|지원\s*팀|담당자|관리자|영업\s*팀|상담원|"
             r"판매처|헬프\s*데스크|공식\s*(?:홈페이지|웹사이트|문서)|홈페이지|웹사이트|문의처|"
             r"고객\s*서비스|서비스\s*센터|[가-힣]*팀)")
_KO = re.compile("|".join([
    # Cannot confirm / find / know / answer.
    r"확인(?:할|하실|해\s*드릴|해드릴|이)?\s*수\s*(?:가\s*)?없",
    r"확인(?:이|되지|이\s*되지|하기|가)\s*(?:않|어렵|불가|안\s*됩|되지\s*않)",
    r"찾(?:을|지)\s*(?:수\s*(?:가\s*)?없|못)",
    r"(?:^|\s)(?:알\s*수\s*(?:가\s*)?없|모르겠|모릅니다|잘\s*모르)",
    r"(?:답변|대답|말씀|안내|답)(?:을|를)?\s*(?:드리기|드릴|해\s*드리기|해드리기|하기|해\s*드릴|"
    r"해드릴)\s*(?:수\s*(?:가\s*)?없|어렵|힘들|곤란)",
    r"도와\s*드릴\s*수\s*(?:가\s*)?없|도움을\s*드릴\s*수\s*(?:가\s*)?없",
    # No information in the sources.
    r"(?:정보|내용|자료|언급|답변|기록|데이터|설명)(?:가|이|는|은|도)?\s*(?:\S+\s+){0,2}?"
    r"(?:없습니다|없어요|없다|없네요|없는\s*것|나와\s*있지\s*않|포함되어\s*있지\s*않|"
    r"확인되지\s*않|찾을\s*수\s*없)",
    # Redirections and sign-offs.
    _KO_AGENT + r"\s*(?:으로|로|에게|께|에)?\s*(?:\S+\s+)?(?:문의|연락|확인|상담)"
    r"(?:해|하여|하시기|하시|해\s*주|주시기|바랍|하세요|부탁|드리|하십|\s*바랍|\s*부탁)",
    r"(?:궁금한|문의|다른|추가|더)\s*(?:\S+\s+){0,2}(?:있으시면|있으면|있다면)\s*(?:\S+\s+){0,2}?"
    r"(?:말씀|알려|문의|연락|물어)",
    r"도움이\s*(?:되|됐|되었|되셨)(?:기를|길|으면|으셨|셨)",
    r"^(?:정말\s*|대단히\s*)?(?:죄송합니다|죄송해요|미안합니다|미안해요|유감입니다)[.!]?$",
]))


# Every pattern above needs one of these words; most sentences have none (a cheap first test).
_TRIGGER = re.compile(r"n't|\b(?:no|not|none|nothing|unable|failed|cannot|unclear|please|kindly|"
                      r"sorry|apologies|unfortunately|"
                      r"you|hope|let|feel|anything|happy|glad|thanks?|thank|outside|beyond|"
                      r"recommend|suggest|advise|encourage|urge|contact\w*|check\w*|reach\w*|"
                      r"touch|consult\w*|ask\w*|call\w*|e-?mail\w*|speak\w*|talk\w*|refer\w*|"
                      r"visit\w*|see|follow\w*)\b|"
                      r"없|않|못|모르|어렵|힘들|곤란|문의|연락|확인|상담|말씀|알려|물어|도움|죄송|미안|유감",
                      re.IGNORECASE)


# "…를 찾을 수 없다는 뜻입니다" ("means that … cannot be found") reports what something says;
# the inability is not the speaker's. Only when the speaker is not in the sentence too.
_KO_REPORTED = re.compile(r"(?:없|않|못|모르)(?:다는|다고|음을)\s*(?:\S+\s+)?"
                          r"(?:뜻|의미|것을\s*(?:의미|뜻)|메시지|오류|에러|표시|상태)")
_KO_SPEAKER = re.compile(r"죄송|미안|유감|저는|제가|저희|드릴|드리")


def is_refusal(sentence: str) -> bool:
    """Whether a sentence declines, hedges, redirects or signs off instead of stating."""
    s = " ".join(sentence.replace("’", "'").split())
    if not _TRIGGER.search(s):
        return False
    if _KO.search(s) and not (_KO_REPORTED.search(s) and not _KO_SPEAKER.search(s)):
        return True
    if _EN.search(s):
        return True
    # A redirection that gives an address or a number states something checkable.
    return bool(_EN_REDIRECT.search(s)) and not _CONTACT.search(s)
