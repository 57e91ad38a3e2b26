"""The words of the ongoing demo activity: notes, revisions, web claims, proposals, verdicts.

Text is composed from small vocabularies with a seeded random source and the time of day, so a
running demo reads like a team at work and never writes the same content twice in a scope (which
the store would short-circuit as a duplicate, docs/store-format.md §4.2). A title is not used again
while it is among the last ``RECENT_TITLES`` written, so the pages never show a run of repeats
(docs/demo.md §5).
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

SUBJECTS = ("the Berlin offsite", "the Lisbon trip", "the quarterly review", "the booking tool",
            "the expense run", "the on-call rota", "the visa letters", "the team dinner",
            "the deploy pipeline", "the hotel shortlist", "the vendor contract", "the Oslo office",
            "the laptop refresh", "the Zurich workshop", "the security training", "the travel budget",
            "the customer demo", "the release checklist", "the Madrid hiring day", "the badge queue")
FACTS = ("moved to {day}", "needs sign-off from {person}", "is owned by {person} now",
         "breaks when more than {n} people are added", "has a {n}-day lead time",
         "was rescheduled after {person} raised a conflict", "should be checked every {day}",
         "waits on {person}'s reply", "is capped at {n} people", "starts an hour earlier on {day}s",
         "goes through {person} from now on", "needs {n} days' notice", "is done for this quarter")
# How a note's title opens, so the same subject does not always read the same way.
OPENINGS = ("{Subject} {fact}", "Heads-up: {subject} {fact}", "{Person} says {subject} {fact}",
            "Note from {day}: {subject} {fact}")
REVISIONS = ("confirmed again in the {day} planning call", "{person} owns it from now on",
             "moved to {day} after {person} raised a conflict", "the lead time is {n} days now",
             "{person} double-checked it this morning")
WEB_CLAIMS = ("hotels in {city} waive the city tax for stays under {n} nights",
              "the {city} embassy releases new appointments every {day}",
              "airlines refund cancelled {city} flights within {n} hours",
              "the per-diem cap no longer applies to contractors in {city}",
              "train strikes in {city} end on {day}",
              "coworking passes in {city} are free on {day}s",
              "the {city} airport lounge admits guests with any ticket over {n} euros",
              "taxis from {city} airport charge a flat {n} euros",
              "visitors to {city} no longer need a transit visa for stays under {n} days")
REVIEW_RELEASE = ("checked against the facilities page", "confirmed by {person} in chat",
                  "matches the travel handbook")
REVIEW_TOMBSTONE = ("not confirmed by anyone on the team", "contradicts the travel handbook",
                    "the only source is a forum post")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
PEOPLE = ("Luka", "Ana", "Mira", "Tomas", "Petra", "Maria", "Jonas")
CITIES = ("Berlin", "Lisbon", "Oslo", "Zurich", "Madrid")
TAGS = ("travel", "ops", "finance", "hr", "deploys", "lisbon", "berlin", "oslo", "vendors", "food")
KINDS = ("preference", "fact", "gotcha", "procedure", "open_loop")
RECENT_TITLES = 64  # about eight rounds of notes, claims and proposals in one realm
FRESH_TRIES = 20


@dataclass(frozen=True)
class Note:
    title: str
    body: str
    kind: str
    tags: tuple[str, ...]


class Phrasebook:
    """A seeded source of the activity's text."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.recent: deque[str] = deque(maxlen=RECENT_TITLES)

    def _fresh(self, make: Callable[[], Note]) -> Note:
        """A note whose title is not among the recent ones (the last try is kept regardless)."""
        for _ in range(FRESH_TRIES):
            note = make()
            if note.title not in self.recent:
                break
        self.recent.append(note.title)
        return note

    def _fill(self, template: str) -> str:
        return template.format(day=self.rng.choice(DAYS), person=self.rng.choice(PEOPLE),
                               n=self.rng.randint(2, 40), city=self.rng.choice(CITIES))

    @staticmethod
    def _clock() -> str:
        return time.strftime("%H:%M:%S")

    def note(self, session: str) -> Note:
        return self._fresh(lambda: self._note(session))

    def _note(self, session: str) -> Note:
        subject, fact = self.rng.choice(SUBJECTS), self._fill(self.rng.choice(FACTS))
        title = self.rng.choice(OPENINGS).format(
            Subject=_capital(subject), subject=subject, fact=fact, Person=self.rng.choice(PEOPLE),
            day=self.rng.choice(DAYS))
        return Note(title=_capital(title),
                    body=(f"Noted in {session} at {self._clock()}: {subject} {fact}. "
                          f"{self.rng.choice(PEOPLE)} confirmed it; revisit if {subject} changes owner."),
                    kind=self.rng.choice(KINDS), tags=tuple(self.rng.sample(TAGS, 2)))

    def revision(self, prior_body: str) -> str:
        first = prior_body.split(". ", 1)[0].rstrip(".")
        return f"{first}. Update at {self._clock()}: {self._fill(self.rng.choice(REVISIONS))}."

    def web_claim(self, session: str) -> Note:
        return self._fresh(lambda: self._web_claim(session))

    def _web_claim(self, session: str) -> Note:
        claim = self._fill(self.rng.choice(WEB_CLAIMS))
        return Note(title=_capital(claim),
                    body=(f"Read on a web page fetched in {session} at {self._clock()}: {claim}. "
                          "Nobody on the team has confirmed it."),
                    kind="fact", tags=("web",))

    def proposal(self, mob: str, *, from_web: bool) -> Note:
        return self._fresh(lambda: self._proposal(mob, from_web=from_web))

    def _proposal(self, mob: str, *, from_web: bool) -> Note:
        if from_web:
            claim = self._fill(self.rng.choice(WEB_CLAIMS))
            return Note(title=f"For the {mob} mob: {claim}",
                        body=f"A travel site says {claim} (read at {self._clock()}); useful for every visitor.",
                        kind="fact", tags=("web", "travel"))
        subject, fact = self.rng.choice(SUBJECTS), self._fill(self.rng.choice(FACTS))
        return Note(title=f"For the {mob} mob: {subject} {fact}",
                    body=(f"Everyone in {mob} runs into this: {subject} {fact}. "
                          f"Agreed with {self.rng.choice(PEOPLE)} at {self._clock()}."),
                    kind="procedure", tags=tuple(self.rng.sample(TAGS, 2)))

    def verdict(self) -> tuple[str, str]:
        """A reviewer's decision and rationale: mostly tombstones, as for unconfirmed web claims."""
        if self.rng.random() < 0.35:
            return "release", self._fill(self.rng.choice(REVIEW_RELEASE))
        return "tombstone", self._fill(self.rng.choice(REVIEW_TOMBSTONE))

    def choice(self, items: Sequence[T]) -> T:
        return self.rng.choice(items)


def _capital(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}" if text else text
