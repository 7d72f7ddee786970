"""Words that name things of a closed kind: months, seasons, weekdays, colours; acronyms;
Korean family names and the titles said after a person's name. One table each, shared by the
judges and the diagnostics."""

from __future__ import annotations

from .tokens import MONTHS, Token

__all__ = ["CLOSED_CLASSES", "KO_SURNAMES", "KO_TITLES", "WEEKDAY_SHORT", "WEEKDAYS", "acronym",
           "closed_class", "ko_title"]

#: Weekdays written out, English and Korean.
WEEKDAYS = frozenset(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                      "월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일"])
#: Weekdays shortened ("Mon", "Tues", "월"), and the weekday each is.
WEEKDAY_SHORT = {"mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
                 "thu": "thursday", "thur": "thursday", "thurs": "thursday", "fri": "friday",
                 "sat": "saturday", "sun": "sunday", **{k: k + "요일" for k in "월화수목금토일"}}

#: Closed classes whose members name alternatives of one kind: one in the claim and another
#: in the same slot of the premise is a swap ("spring sale" / "summer sale").
CLOSED_CLASSES: dict[str, str] = {
    **dict.fromkeys(MONTHS, "month"),
    **dict.fromkeys(("spring", "summer", "autumn", "fall", "winter", "봄", "여름", "가을", "겨울"),
                    "season"),
    # Alone, "sat", "sun", "wed" are more often words than weekdays, and "월" is a month or won.
    **dict.fromkeys(sorted(WEEKDAYS | {k for k in WEEKDAY_SHORT
                                       if k.isascii() and k not in ("sat", "sun", "wed")}),
                    "weekday"),
    # Colours name variants of one product ("blue, size 42" / "red, size 42"); Korean stems
    # (particles off: "블랙의" is "블랙").
    **dict.fromkeys(("red", "blue", "green", "black", "white", "yellow", "orange", "purple",
                     "pink", "grey", "gray", "silver", "gold", "brown", "navy", "beige", "teal",
                     "빨간색", "빨강", "레드", "파란색", "파랑", "블루", "초록색", "녹색", "그린",
                     "검은색", "검정", "검정색", "블랙", "흰색", "하얀색", "화이트", "노란색", "옐로",
                     "회색", "그레이", "은색", "실버", "금색", "골드", "분홍색", "핑크", "네이비",
                     "남색", "베이지", "보라색", "퍼플", "주황색", "오렌지"), "colour"),
}


def acronym(tok: Token) -> bool:
    """An upper-case abbreviation ("US", "EU", "APAC"): a name, though "us" is a stopword."""
    return 2 <= len(tok.text) <= 5 and tok.text.isalpha() and tok.text.isupper()


def closed_class(tok: Token) -> str | None:
    """The closed class of ``tok`` ("season" for "Summer", "봄"), or None."""
    low = tok.text.lower()
    return CLOSED_CLASSES.get(low) or (CLOSED_CLASSES.get(tok.norm) if tok.hangul else None)


#: Common Korean family names.
KO_SURNAMES = frozenset("김이박최정강조윤장임한오서신권황안송류전홍고문양손배백허유남심노하곽성차주우구민진나"
                        "지엄채원천방공현함변염여추도소석선설마길연위표명기반왕금옥육인맹제모탁국어은편용예")
#: Titles said after a person's name ("김도윤 과장", "박서연 교수님", "이도윤 씨").
KO_TITLES = ("교수", "선생", "님", "씨", "팀장", "과장", "부장", "대리", "차장", "실장", "원장", "의사",
             "간호사", "매니저", "강사", "코치", "대표", "이사", "주임", "사원", "약사", "변호사", "세무사",
             "담당", "상담사", "기사", "박사", "원사", "선임", "책임", "수석", "회장", "사장", "본부장")


def ko_title(word: str) -> bool:
    """``word`` is, or starts with, a title said after a name ("교수님", "팀장")."""
    return word.startswith(KO_TITLES)
