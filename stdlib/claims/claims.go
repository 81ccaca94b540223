// Package claims reads what a text asserts: the values it names (dates, times, durations, money,
// percentages, counts, phone numbers, mail addresses, ids, names and statuses), normalised across
// the formats people write, each with the stance of its clause (asserted, negated, hedged,
// conditional, question, past, reported) and what it is about. Verifiers use it through the
// Starlark module "claims" (module.go) to say "the mail states the cut-off is 14:30, and states no
// other cut-off" in one call that is strict and fair at once; the validator uses the same reading to
// attack those statements and to reword them harmlessly.
//
// The reader is a documented rule set in the spirit of NegEx and ConText (clinical text
// processing): trigger words with a scope, clause breaks and terminators that end a scope, status
// words with their antonyms (lexicon.go). Rules lists them for the docs. What it cannot read is
// written down in docs/claims.md. It is deterministic and linear in the text's length; Read keeps
// recent readings in a small cache.
package claims

import (
	"time"

	"github.com/shopspring/decimal"
)

// Kind is the kind of a value.
type Kind string

const (
	Date     Kind = "date"     // a day: "2026-01-08"
	Time     Kind = "time"     // a time of day: "14:30"
	Duration Kind = "duration" // a length of time, in seconds: "2700" (45 minutes); months as "3mo"
	Money    Kind = "money"    // an amount with its currency: "EUR 1240.00"
	Percent  Kind = "percent"  // a percentage: "13.5"
	Count    Kind = "count"    // a number of things: "18 pallet"
	Number   Kind = "number"   // a plain number: "200"
	Phone    Kind = "phone"    // E.164: "+31182555023"
	Email    Kind = "email"    // lower case: "dirk@verdant.example"
	ID       Kind = "id"       // an identifier: "INV-2041"
	Name     Kind = "name"     // a person, company or place the workspace or the verifier knows
	Status   Kind = "status"   // a status word on its axis: "approved"
	Phrase   Kind = "phrase"   // any other words a verifier asks about
)

// Kinds lists every kind, in the order the docs show them.
var Kinds = []Kind{Date, Time, Duration, Money, Percent, Count, Number, Phone, Email, ID, Name, Status, Phrase}

// Stance is how a clause puts a value forward.
type Stance string

const (
	Asserted    Stance = "asserted"    // stated as true
	Negated     Stance = "negated"     // "not 11:00", "isn't approved"
	Hedged      Stance = "hedged"      // "probably 14:30", "14% or 13.5%", "about EUR 1,200"
	Conditional Stance = "conditional" // "16:15 if you go via Antwerp", "otherwise Friday"
	Question    Stance = "question"    // in a sentence that asks
	Past        Stance = "past"        // superseded: "originally Thursday", "moved from 10:00", "no longer pending"
	Reported    Stance = "reported"    // somebody else's words: quotes, quoted mail, "Dirk said 16:15"
)

// Stances lists every stance, in the order the docs show them.
var Stances = []Stance{Asserted, Negated, Hedged, Conditional, Question, Past, Reported}

// puts reports whether a stance puts the value forward as the writer's own: asserted, hedged or
// conditional. A rival value in such a stance makes a statement fail.
func (s Stance) puts() bool { return s == Asserted || s == Hedged || s == Conditional }

// Claim is one value a text names, with its stance and what it is about.
type Claim struct {
	Kind   Kind
	Value  string // the normal form (see Kind)
	Text   string // as written
	Start  int    // byte offsets in the text
	End    int
	Stance Stance
	// Trigger is the word that set the stance ("" when asserted by default); TriggerStart and
	// TriggerEnd its byte offsets in the text (-1 when the stance came from no word: a question
	// mark, a quote, an alternative).
	Trigger      string
	TriggerStart int
	TriggerEnd   int
	// About is what the value is about, as the text says it: the words of its clause and of the
	// clauses it continues, and the names it is bound to.
	About string
	// Entity is the name the value is bound to ("" when none): see the binding rules.
	Entity string
	// Role is "start" or "end" for the ends of a range ("9:00-11:00", "8-10 January"), "part" or
	// "whole" for a part of a whole ("3 of the 48 racks"); a whole is no rival. "variant" is another
	// measure of the thing, in brackets ("(EUR 1,240.00 without surcharge)"): no rival either.
	// "label" is a number that names a place or a part ("dock 4"): a rival of a number only.
	Role string
	// Per is what an amount or a count is a rate of: "kg" in "8.33 SDR per kg" and "EUR 2.50/kg",
	// "pallet" in "EUR 10.80 per pallet", "each" in "EUR 10.80 each"; "" for a plain value.
	Per string
	// Sentence is the index of its sentence in the text.
	Sentence int

	num      decimal.Decimal // money, percent, count, number; seconds for a duration
	unit     string          // the currency of money, the singular unit of a count, "mo" for months
	day      time.Time       // a date at midnight UTC
	weekday  int             // a date named by its weekday only (no clock): 0 Sunday ... 6 Saturday; -1 otherwise
	alts     []time.Time     // other days an ambiguous date may mean ("next Friday", "8/1" without a region)
	conflict bool            // a weekday and a date that disagree ("Thursday 16 January" when the 16th is a Friday)
	zone     *int            // a time's explicit zone, minutes east of UTC
	axis     string          // a status's axis
	nameKey  string          // a name's key
}

// NameClass is the class of a name.
type NameClass string

const (
	Person  NameClass = "person"
	Company NameClass = "company"
	Place   NameClass = "place"
	Other   NameClass = "other"
)

// KnownName is a name the reader recognises: a person, a company or a place, with the other ways
// it may be written ("Dirk", "Peeters", "D. Peeters" for "Dirk Peeters"; "Kaasmakers" for "De
// Kaasmakers B.V."). Key names it in claims (the full name by default).
type KnownName struct {
	Key     string
	Class   NameClass
	Aliases []string
}

// Options says what the reader knows about a text beyond its words.
type Options struct {
	// Written is when the text was written: weekday and relative dates ("Friday", "tomorrow") are
	// read against it, in Location. Zero: they are read by their weekday alone.
	Written time.Time
	// Location is the writer's time zone (nil: UTC).
	Location *time.Location
	// Region is the default region of phone numbers and day/month order ("NL", "US"; "" means
	// phone numbers need a country code, and "8/1" is the 8th of January).
	Region string
	// Names are the people, companies and places the text may name.
	Names []KnownName
	// IDs are identifiers of the workspace that may appear in the text ("m12", "kaas-001").
	IDs []string

	idx *index // Names and IDs compiled (indexOf)
}
