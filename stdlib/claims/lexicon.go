package claims

// The rule set. Every word list the reader uses is here, as data, so that docs/claims.md (generated
// from Rules) shows exactly what the reader knows. A trigger is matched on whole lower-case words
// (a multi-word trigger on consecutive words); the longest trigger at a position wins, so "no
// longer" is a past trigger and not the negation "no", and "no later than" is a pseudo-trigger
// that sets nothing.

// trigger is one entry of the rule set: words that set a stance on the values in their scope.
type trigger struct {
	words  string // lower case, words separated by single spaces
	stance Stance // the stance it sets; "" for a pseudo-trigger (it only hides the shorter triggers it contains)
	dir    dir    // which way its scope runs from the trigger
}

// dir is the direction of a trigger's scope.
type dir uint8

const (
	fwd  dir = 1 << iota // to the end of its clause (at most scopeWords words)
	back                 // back to the start of its clause (at most scopeWords words)
	sent                 // the whole sentence
	adj                  // only the value right after it ("about 14%", "around 14:30")
	stat                 // statuses only: a request asks for a status ("please approve"), its values are the writer's terms ("please deliver 600 pallets")
)

// scopeWords bounds a forward or backward scope, in words (a value counts as one word), as NegEx
// bounds its window.
const scopeWords = 8

// triggers is the rule set of stances, in the spirit of NegEx and ConText: negation, hedging,
// conditionals, superseded (past) values and reported speech. Questions are sentences that end
// with "?"; quotes and quoted mail are reported wholesale (see the reader).
var triggers = []trigger{
	// Pseudo-triggers: they contain a trigger word but set nothing.
	{"no later than", "", fwd}, {"not later than", "", fwd}, {"no earlier than", "", fwd}, {"not before", "", fwd},
	{"not only", "", fwd}, {"no doubt", "", fwd}, {"without doubt", "", fwd}, {"not just", "", fwd},
	{"no problem", "", fwd},
	{"nothing else", "", fwd}, {"no other", "", fwd}, {"none other than", "", fwd}, {"no change", "", fwd},
	{"no changes", "", fwd}, {"not until", "", fwd}, {"if any", "", fwd}, {"if anything", "", fwd},
	{"as if", "", fwd}, {"even if", "", fwd}, {"whether or not", "", fwd}, {"could you", "", fwd},
	{"would you", "", fwd}, {"can you", "", fwd}, {"once a", "", fwd}, {"once per", "", fwd}, {"once every", "", fwd},
	{"once more", "", fwd}, {"once again", "", fwd}, {"at once", "", fwd}, {"over the", "", fwd}, {"under the", "", fwd}, {"in case you need", "", fwd}, {"just in case", "", fwd}, {"either way", "", fwd}, {"if you have any questions", "", fwd}, {"if you need anything", "", fwd},
	{"if anything else", "", fwd}, {"let me know if", "", fwd}, {"if you need", "", fwd}, {"if needed", "", fwd},
	{"if helpful", "", fwd}, {"if that helps", "", fwd}, {"i would like", "", fwd}, {"would like", "", fwd}, {"i'd like", "", fwd}, {"we'd like", "", fwd}, {"i'd be happy", "", fwd},
	// an "if" that sets no condition: "If you're asking about the cut-off, it's 16:00"
	{"weather permitting", Conditional, fwd | back}, {"subject to", Conditional, fwd}, {"on condition that", Conditional, fwd}, {"barring", Conditional, fwd},
	{"if you're asking", "", fwd}, {"if you are asking", "", fwd}, {"if you're wondering", "", fwd}, {"if you are wondering", "", fwd}, {"if you were wondering", "", fwd}, {"in case you were wondering", "", fwd},
	// a polite offer, no condition: "The call is at 14:30, if that works for you"
	{"if that works", "", fwd}, {"if that suits", "", fwd}, {"if that's okay", "", fwd}, {"if that is okay", "", fwd}, {"if that's ok", "", fwd}, {"if that is ok", "", fwd}, {"if that's alright", "", fwd}, {"if that's all right", "", fwd}, {"if convenient", "", fwd}, {"if that's convenient", "", fwd},
	{"in case anyone asks", "", fwd}, {"if anyone asks", "", fwd}, {"in case you're wondering", "", fwd}, {"in case you are wondering", "", fwd},
	// advice: "I'd quote EUR 1,335" recommends, it does not make the value hypothetical
	{"i'd quote", "", fwd}, {"i'd recommend", "", fwd}, {"i'd suggest", "", fwd}, {"i'd propose", "", fwd}, {"i'd advise", "", fwd}, {"i'd go with", "", fwd}, {"i'd choose", "", fwd}, {"i'd pick", "", fwd}, {"i'd offer", "", fwd}, {"i would quote", "", fwd}, {"i would recommend", "", fwd}, {"i would suggest", "", fwd}, {"i would propose", "", fwd}, {"i would advise", "", fwd}, {"i would go with", "", fwd}, {"i would choose", "", fwd}, {"i would pick", "", fwd}, {"i would offer", "", fwd}, {"we'd quote", "", fwd}, {"we'd recommend", "", fwd}, {"we'd suggest", "", fwd}, {"we'd propose", "", fwd}, {"we'd advise", "", fwd}, {"we'd go with", "", fwd}, {"we'd choose", "", fwd}, {"we'd pick", "", fwd}, {"we'd offer", "", fwd}, {"we would quote", "", fwd}, {"we would recommend", "", fwd}, {"we would suggest", "", fwd}, {"we would propose", "", fwd}, {"we would advise", "", fwd}, {"we would go with", "", fwd}, {"we would choose", "", fwd}, {"we would pick", "", fwd}, {"we would offer", "", fwd},
	{"please let me know", "", fwd}, {"i would be happy", "", fwd}, {"would be happy", "", fwd}, {"not hesitate", "", fwd},

	// Negation.
	{"not", Negated, fwd}, {"no", Negated, fwd}, {"never", Negated, fwd}, {"none", Negated, fwd},
	{"nothing", Negated, fwd}, {"neither", Negated, fwd}, {"nor", Negated, fwd}, {"without", Negated, fwd},
	{"cannot", Negated, fwd}, {"can't", Negated, fwd}, {"couldn't", Negated, fwd}, {"could not", Negated, fwd},
	{"wasn't able to", Negated, fwd}, {"weren't able to", Negated, fwd}, {"was unable to", Negated, fwd}, {"failed to", Negated, fwd}, {"won't", Negated, fwd}, {"isn't", Negated, fwd | back},
	{"aren't", Negated, fwd | back}, {"wasn't", Negated, fwd | back}, {"weren't", Negated, fwd | back},
	{"don't", Negated, fwd}, {"doesn't", Negated, fwd | back}, {"didn't", Negated, fwd}, {"haven't", Negated, fwd},
	{"hasn't", Negated, fwd | back}, {"hadn't", Negated, fwd}, {"shouldn't", Negated, fwd}, {"mustn't", Negated, fwd},
	{"is not", Negated, fwd | back}, {"are not", Negated, fwd | back}, {"was not", Negated, fwd | back},
	{"were not", Negated, fwd | back}, {"does not", Negated, fwd | back}, {"did not", Negated, fwd | back},
	{"has not", Negated, fwd | back}, {"have not", Negated, fwd | back}, {"will not", Negated, fwd | back},
	{"not yet", Negated, fwd}, {"unable to", Negated, fwd}, {"not able to", Negated, fwd},
	{"is wrong", Negated, back}, {"is incorrect", Negated, back}, {"is not correct", Negated, back},
	{"is not right", Negated, back}, {"does not apply", Negated, back}, {"doesn't apply", Negated, back},
	{"ruled out", Negated, back | fwd}, {"denied", Negated, back},
	// a value set by mistake is not so: "was scanned as delivered by mistake"
	{"by mistake", Negated, back}, {"in error", Negated, back}, {"mistakenly", Negated, fwd}, {"wrongly", Negated, fwd},
	{"erroneously", Negated, fwd}, {"incorrectly", Negated, fwd},

	// Superseded (past) values: the value was true once and is not any more.
	{"originally", Past, fwd}, {"previously", Past, fwd}, {"formerly", Past, fwd}, {"initially", Past, fwd},
	{"no longer", Past, fwd | back}, {"not anymore", Past, back}, {"not any more", Past, back}, {"any more", Past, back},
	{"anymore", Past, back}, {"last year", Past, fwd | back}, {"last month", Past, fwd | back}, {"last quarter", Past, fwd | back}, {"used to be", Past, fwd}, {"used to", Past, fwd}, {"instead of", Past, adj},
	{"rather than", Past, adj}, {"in place of", Past, adj}, {"replacing", Past, adj}, {"replaces", Past, adj},
	{"old", Past, fwd}, {"earlier", Past, fwd}, {"the previous", Past, fwd}, {"the original", Past, fwd}, {"before the change", Past, back | fwd},
	{"moved from", Past, adj}, {"changed from", Past, adj}, {"rescheduled from", Past, adj}, {"shifted from", Past, adj},
	{"postponed from", Past, adj}, {"brought forward from", Past, adj}, {"pushed from", Past, adj}, {"updated from", Past, adj},
	{"corrected from", Past, adj}, {"raised from", Past, adj}, {"lowered from", Past, adj}, {"reduced from", Past, adj},
	{"increased from", Past, adj}, {"up from", Past, adj}, {"down from", Past, adj}, {"compared with", Past, adj},
	{"compared to", Past, adj}, {"versus", Past, adj}, {"vs", Past, adj}, {"up by", Past, adj}, {"down by", Past, adj},
	{"increase of", Past, adj}, {"decrease of", Past, adj}, {"rise of", Past, adj}, {"drop of", Past, adj},
	{"rose by", Past, adj}, {"fell by", Past, adj}, {"went up by", Past, adj}, {"went down by", Past, adj}, {"was replaced", Past, back}, {"has been replaced", Past, back}, {"is outdated", Past, back},
	{"is out of date", Past, back}, {"is obsolete", Past, back}, {"is superseded", Past, back}, {"has changed", Past, back},
	{"until last week", Past, back}, {"until last month", Past, back}, {"until yesterday", Past, back}, {"until recently", Past, back}, {"until now", Past, back},
	{"tried to", Past, fwd}, {"attempted to", Past, fwd}, // an attempt: "I tried to book 14:30 but it was taken"
	// a status taken back: "CLM-7001 was approved on 2 March but the approval was withdrawn"
	{"was withdrawn", Past, sent | stat}, {"has been withdrawn", Past, sent | stat}, {"was revoked", Past, sent | stat},
	{"has been revoked", Past, sent | stat}, {"was rescinded", Past, sent | stat}, {"was reversed", Past, sent | stat},
	{"has been reversed", Past, sent | stat},
	{"was originally", Past, fwd}, {"were originally", Past, fwd},

	// Hedges: the writer does not commit to the value.
	{"should be", Hedged, fwd}, {"as far as i know", Hedged, fwd | back}, {"afaik", Hedged, fwd | back},
	{"if i'm not mistaken", Hedged, fwd | back}, {"if i am not mistaken", Hedged, fwd | back}, {"i'm fairly sure", Hedged, fwd | back},
	{"i'm pretty sure", Hedged, fwd | back}, {"fairly sure", Hedged, fwd | back}, {"pretty sure", Hedged, fwd | back},
	{"i'm not certain", Hedged, fwd | back}, {"if memory serves", Hedged, fwd | back},
	{"maybe", Hedged, fwd}, {"perhaps", Hedged, fwd}, {"possibly", Hedged, fwd}, {"probably", Hedged, fwd | back},
	{"likely", Hedged, fwd}, {"unlikely", Hedged, fwd}, {"presumably", Hedged, fwd}, {"apparently", Hedged, fwd},
	{"looks", Hedged, fwd}, {"looks like", Hedged, fwd}, {"sounds", Hedged, fwd}, {"sounds like", Hedged, fwd},
	{"i think", Hedged, fwd | back}, {"i believe", Hedged, fwd | back}, {"i guess", Hedged, fwd | back},
	{"i assume", Hedged, fwd | back}, {"i suppose", Hedged, fwd | back}, {"i expect", Hedged, fwd}, {"it seems", Hedged, fwd},
	{"seems", Hedged, fwd | back}, {"seem", Hedged, fwd}, {"appears", Hedged, fwd}, {"might", Hedged, fwd | back},
	{"may", Hedged, fwd}, {"could be", Hedged, fwd}, {"could also be", Hedged, fwd}, {"around", Hedged, adj},
	{"approximately", Hedged, adj}, {"approx", Hedged, adj}, {"roughly", Hedged, adj}, {"circa", Hedged, adj},
	{"ca", Hedged, adj}, {"nearly", Hedged, adj}, {"almost", Hedged, adj}, {"about", Hedged, adj},
	{"or so", Hedged, back}, {"give or take", Hedged, back}, {"or thereabouts", Hedged, back}, {"not sure", Hedged, fwd | back},
	{"unsure", Hedged, fwd | back}, {"uncertain", Hedged, fwd | back}, {"unclear", Hedged, fwd | back}, {"either", Hedged, fwd},
	{"tbc", Hedged, back | fwd}, {"to be confirmed", Hedged, back | fwd}, {"tentatively", Hedged, fwd}, {"tentative", Hedged, fwd | back},
	// a hedged negation denies nothing: "INV-7731 might not be approved"
	{"might not", Hedged, fwd | back}, {"may not", Hedged, fwd | back}, {"probably not", Hedged, fwd | back},
	{"possibly not", Hedged, fwd | back}, {"perhaps not", Hedged, fwd | back}, {"maybe not", Hedged, fwd | back},
	{"not 100% sure", Hedged, fwd | back}, {"not 100 % sure", Hedged, fwd | back}, {"not 100% certain", Hedged, fwd | back},
	// a value said to come true later is not one yet: "TCK-8801 is resolved, or it will be once …"
	{"or it will be", Hedged, sent}, {"or will be", Hedged, sent}, {"or it soon will be", Hedged, sent}, {"or it should be", Hedged, sent},
	{"ready to", Hedged, fwd}, {"about to", Hedged, fwd},
	{"provisionally", Hedged, fwd}, {"provisional", Hedged, fwd | back}, {"hopefully", Hedged, fwd | back}, {"prob", Hedged, fwd}, {"probs", Hedged, fwd},
	{"as far as i can tell", Hedged, fwd | back}, {"as far as i can see", Hedged, fwd | back}, {"as far as we can tell", Hedged, fwd | back},
	{"not entirely sure", Hedged, fwd | back}, {"not completely sure", Hedged, fwd | back}, {"not fully sure", Hedged, fwd | back}, {"if i recall", Hedged, back | fwd},
	{"if i remember", Hedged, back | fwd}, {"can't remember", Hedged, back | fwd}, {"cannot remember", Hedged, back | fwd},
	{"don't remember", Hedged, back | fwd}, {"can't recall", Hedged, back | fwd}, {"don't recall", Hedged, back | fwd},
	{"not certain", Hedged, fwd | back}, {"if i'm not mistaken", Hedged, back | fwd}, {"i'd say", Hedged, fwd | back}, {"somewhere", Hedged, fwd},
	{"at most", Hedged, adj}, {"at least", Hedged, adj}, {"up to", Hedged, adj}, {"more than", Hedged, adj},
	{"less than", Hedged, adj}, {"fewer than", Hedged, adj}, {"over", Hedged, adj}, {"under", Hedged, adj}, {"above", Hedged, adj},
	{"below", Hedged, adj}, {"no more than", Hedged, adj}, {"not more than", Hedged, adj}, {"no less than", Hedged, adj},
	{"not less than", Hedged, adj}, {"at the earliest", Hedged, back}, {"or more", Hedged, back}, {"or less", Hedged, back},
	{"or later", Hedged, back}, {"or earlier", Hedged, back}, {"in the region of", Hedged, adj}, {"upwards of", Hedged, adj},
	{"or", Hedged, 0}, // an alternative: see alternatives in the reader; "or" alone has no scope of its own

	// Conditionals: true only if something else holds.
	{"if", Conditional, fwd}, {"unless", Conditional, fwd}, {"in case", Conditional, fwd}, {"provided that", Conditional, fwd},
	{"providing that", Conditional, fwd}, {"assuming", Conditional, fwd}, {"as long as", Conditional, fwd}, {"only if", Conditional, fwd},
	{"depending on", Conditional, fwd | back}, {"in the event", Conditional, fwd}, {"would", Conditional, fwd | back}, {"i'd", Conditional, fwd}, {"we'd", Conditional, fwd},
	{"could", Conditional, fwd}, {"otherwise", Conditional, fwd}, {"alternatively", Conditional, fwd}, {"or else", Conditional, fwd},
	{"failing that", Conditional, fwd}, {"if not", Conditional, fwd}, {"should it", Conditional, fwd}, {"in that case", Conditional, fwd},
	{"as a fallback", Conditional, fwd}, {"fallback option", Conditional, fwd}, {"as a backup", Conditional, fwd}, {"backup option", Conditional, fwd},
	{"plan b", Conditional, fwd}, {"worst case", Conditional, fwd}, {"in the worst case", Conditional, fwd},
	{"let's assume", Conditional, fwd}, {"let us assume", Conditional, fwd}, {"suppose", Conditional, fwd},
	{"supposing", Conditional, fwd}, {"once", Conditional, fwd}, {"as soon as", Conditional, fwd},

	// Requests: "please approve" asks for a status, it does not state one.
	{"please", Question, fwd | stat}, {"kindly", Question, fwd | stat},

	// Reported speech: somebody else's words.
	{"said", Reported, fwd}, {"says", Reported, fwd}, {"told", Reported, fwd}, {"wrote", Reported, fwd},
	{"writes", Reported, fwd}, {"mentioned", Reported, fwd}, {"mentions", Reported, fwd}, {"claims", Reported, fwd},
	{"claimed", Reported, fwd}, {"reported", Reported, fwd}, {"reports", Reported, fwd}, {"suggested", Reported, fwd},
	{"suggests", Reported, fwd}, {"thinks", Reported, fwd}, {"believes", Reported, fwd}, {"assumes", Reported, fwd},
	{"expects", Reported, fwd}, {"guesses", Reported, fwd}, {"reckons", Reported, fwd}, {"according to", Reported, fwd},
	{"proposed", Reported, fwd}, {"proposes", Reported, fwd}, {"asked for", Reported, fwd},
	{"asked", Reported, fwd}, {"asks", Reported, fwd}, {"requested", Reported, fwd},
}

// changeVerbs make "from X to Y" a change (X superseded, Y asserted) rather than a range.
var changeVerbs = words(`move moved moving moves change changed changing changes reschedule rescheduled rescheduling
	shift shifted shifting push pushed postpone postponed bring brought update updated correct corrected
	switch switched amend amended adjust adjusted raise raised lower lowered increase increased reduce reduced
	replace replaced swap swapped revise revised rose rise rising fell fall falling grew grow dropped drop went
	climbed jumped`)

// nowWords make a weak past ("was", "were") a superseded value when they stand in the same sentence.
var nowWords = words(`now new instead changed moved updated corrected rescheduled currently latest revised before
	earlier previously originally`)

// weakPast are past tense copulas: a superseded value only next to a nowWord ("it was Thursday, now
// Friday"); otherwise a plain statement about the past ("the Q3 total was 200").
var weakPast = words(`was were`)

// corrections start a sentence that corrects the previous one: its values are about what the
// previous sentence was about.
var corrections = []string{"correction", "actually", "sorry", "make that", "scratch that", "i mean", "rather",
	"that was wrong", "that is wrong", "that's wrong", "that was a mistake", "i was wrong", "that was incorrect",
	"or rather", "update", "edit", "erratum", "amendment", "to be precise", "more precisely", "in fact", "oops", "my mistake",
	"apologies"}

// anaphors start a clause or sentence that is about what the previous one was about.
var anaphors = words(`it it's its that that's this these those they they're their which he she them there her his him`)

// clauseBreaks are the words that start a new clause within a sentence.
var clauseBreaks = words(`but however although though whereas while yet so because since and or if unless
	except which who whom whose when whereas otherwise`)

// terminators end the scope of a trigger (a clause break ends it too).
var terminators = words(`but however although though whereas yet except apart aside besides still`)

// function words cannot start a clause's own subject (see ownSubject).
var functionWords = words(`a an the and or but so yet for nor to of in on at by from with via per as than
	then also too just only even still is are was were be been being will would shall should can could may
	might must do does did has have had here there now today tomorrow yesterday please kindly thanks
	plus minus about around approximately roughly nearly almost up down over under between within until till
	before after during into onto off out instead rather not no never maybe perhaps possibly probably
	if unless otherwise alternatively my our your me us`)

// abbreviations end with a period that does not end a sentence.
var abbreviations = words(`e.g i.e etc approx ca cf vs no nr mr mrs ms dr st jan feb mar apr jun jul aug sep sept oct nov dec
	mon tue tues wed thu thur thurs fri sat sun inc ltd co corp dept est incl excl min max ref tel fig p pp ph mob`)

// Status words on their axes: two words of one axis with different poles contradict each other
// ("approved" and "rejected"), and a status negated ("not approved") contradicts its own pole.
type statusWord struct {
	word  string // lower case, words separated by spaces
	axis  string
	pole  string
	canon string // the word the pole is named by
}

var statuses = []statusWord{
	{"approved", "approval", "approved", "approved"}, {"accepted", "approval", "approved", "approved"},
	{"signed off", "approval", "approved", "approved"}, {"ok'd", "approval", "approved", "approved"},
	{"okayed", "approval", "approved", "approved"}, {"green light", "approval", "approved", "approved"},
	{"go-ahead", "approval", "approved", "approved"}, {"accept", "approval", "approved", "approved"},
	{"accepts", "approval", "approved", "approved"}, {"approve", "approval", "approved", "approved"},
	{"approves", "approval", "approved", "approved"}, {"decline", "approval", "rejected", "rejected"},
	{"declines", "approval", "rejected", "rejected"}, {"reject", "approval", "rejected", "rejected"},
	{"rejects", "approval", "rejected", "rejected"}, {"authorised", "approval", "approved", "approved"},
	{"authorized", "approval", "approved", "approved"}, {"rejected", "approval", "rejected", "rejected"},
	{"declined", "approval", "rejected", "rejected"}, {"refused", "approval", "rejected", "rejected"},
	{"disapproved", "approval", "rejected", "rejected"}, {"pending", "approval", "pending", "pending"},
	{"awaiting approval", "approval", "pending", "pending"}, {"on hold", "approval", "pending", "pending"},
	{"under review", "approval", "pending", "pending"},

	{"paid", "payment", "paid", "paid"}, {"settled", "payment", "paid", "paid"}, {"unpaid", "payment", "unpaid", "unpaid"},
	{"outstanding", "payment", "unpaid", "unpaid"}, {"overdue", "payment", "unpaid", "unpaid"}, {"due", "payment", "unpaid", "unpaid"},

	{"received", "receipt", "received", "received"}, {"arrived", "receipt", "received", "received"},
	{"delivered", "receipt", "received", "received"}, {"missing", "receipt", "missing", "missing"},
	{"lost", "receipt", "missing", "missing"}, {"not received", "receipt", "missing", "missing"},
	{"undelivered", "receipt", "missing", "missing"}, {"receive", "receipt", "received", "received"},

	{"confirmed", "confirmation", "confirmed", "confirmed"}, {"booked", "confirmation", "confirmed", "confirmed"},
	{"scheduled", "confirmation", "confirmed", "confirmed"}, {"cancelled", "confirmation", "cancelled", "cancelled"},
	{"canceled", "confirmation", "cancelled", "cancelled"}, {"called off", "confirmation", "cancelled", "cancelled"},
	{"unconfirmed", "confirmation", "unconfirmed", "unconfirmed"},

	{"open", "progress", "open", "open"}, {"opened", "progress", "open", "open"}, {"reopened", "progress", "open", "open"},
	{"in progress", "progress", "open", "open"}, {"ongoing", "progress", "open", "open"}, {"closed", "progress", "closed", "closed"},
	{"resolved", "progress", "closed", "closed"}, {"done", "progress", "closed", "closed"}, {"completed", "progress", "closed", "closed"},
	{"complete", "progress", "closed", "closed"}, {"finished", "progress", "closed", "closed"}, {"fixed", "progress", "closed", "closed"},

	{"eligible", "eligibility", "eligible", "eligible"}, {"ineligible", "eligibility", "ineligible", "ineligible"},
	{"not eligible", "eligibility", "ineligible", "ineligible"},

	{"signed", "signature", "signed", "signed"}, {"countersigned", "signature", "signed", "signed"},
	{"unsigned", "signature", "unsigned", "unsigned"},

	{"available", "availability", "available", "available"}, {"free", "availability", "available", "available"},
	{"unavailable", "availability", "unavailable", "unavailable"}, {"busy", "availability", "unavailable", "unavailable"},
	{"away", "availability", "unavailable", "unavailable"}, {"out of office", "availability", "unavailable", "unavailable"},
	{"on leave", "availability", "unavailable", "unavailable"},

	{"valid", "validity", "valid", "valid"}, {"invalid", "validity", "invalid", "invalid"}, {"expired", "validity", "invalid", "invalid"},

	{"compliant", "compliance", "compliant", "compliant"}, {"non-compliant", "compliance", "non-compliant", "non-compliant"},
	{"noncompliant", "compliance", "non-compliant", "non-compliant"},

	{"on time", "punctuality", "on time", "on time"}, {"on schedule", "punctuality", "on time", "on time"},
	{"behind schedule", "punctuality", "late", "late"}, {"late", "punctuality", "late", "late"}, {"delayed", "punctuality", "late", "late"},

	{"in stock", "stock", "in stock", "in stock"}, {"out of stock", "stock", "out of stock", "out of stock"},
	{"sold out", "stock", "out of stock", "out of stock"},

	{"active", "activity", "active", "active"}, {"inactive", "activity", "inactive", "inactive"},
	{"suspended", "activity", "inactive", "inactive"}, {"blocked", "activity", "inactive", "inactive"},

	{"genuine", "authenticity", "genuine", "genuine"}, {"legitimate", "authenticity", "genuine", "genuine"},
	{"fraudulent", "authenticity", "fake", "fake"}, {"fake", "authenticity", "fake", "fake"},
	{"phishing", "authenticity", "fake", "fake"}, {"suspicious", "authenticity", "fake", "fake"},
}

// Months, weekdays and the words of small numbers.
var (
	months = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september",
		"october", "november", "december"}
	weekdays = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

	numberWords = map[string]int{"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
		"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
		"sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
		"fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "dozen": 12}
)

// Currency words and symbols people write, mapped to ISO 4217 codes (any valid code written as
// such is read too: "CHF 12").
var currencyWords = map[string]string{
	"€": "EUR", "euro": "EUR", "euros": "EUR", "eur": "EUR",
	"$": "USD", "us$": "USD", "dollar": "USD", "dollars": "USD", "usd": "USD",
	"£": "GBP", "pound": "GBP", "pounds": "GBP", "gbp": "GBP", "sterling": "GBP",
	"¥": "JPY", "yen": "JPY", "chf": "CHF", "francs": "CHF", "franc": "CHF",
	"c$": "CAD", "ca$": "CAD", "a$": "AUD", "au$": "AUD", "cad": "CAD", "aud": "AUD",
	"kr": "SEK", "sek": "SEK", "nok": "NOK", "dkk": "DKK", "pln": "PLN", "zł": "PLN", "zloty": "PLN",
}

// Duration units, in seconds (months and years are kept as months).
var durationUnits = map[string]int64{
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
	"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
	"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
	"day": 86400, "days": 86400, "d": 86400,
	"week": 7 * 86400, "weeks": 7 * 86400, "wk": 7 * 86400, "wks": 7 * 86400,
	"month": -1, "months": -1, "year": -12, "years": -12,
	"working day": 86400, "working days": 86400, "business day": 86400, "business days": 86400,
}

// Time zone names a time may carry, as offsets in minutes east of UTC.
var zoneWords = map[string]int{"utc": 0, "gmt": 0, "z": 0, "cet": 60, "cest": 120, "bst": 60, "eet": 120,
	"eest": 180, "wet": 0, "west": 60, "est": -300, "edt": -240, "cst": -360, "cdt": -300, "pst": -480, "pdt": -420,
	"mst": -420, "mdt": -360, "et": -300, "ct": -360, "mt": -420, "pt": -480}

// zoneNames are zones written as words before "time" ("Central time", "London time"), with their
// standard (winter) offsets: only fixed offsets are known.
var zoneNames = map[string]int{"eastern": -300, "central": -360, "mountain": -420, "pacific": -480, "london": 0,
	"uk": 0, "amsterdam": 60, "rotterdam": 60, "brussels": 60, "antwerp": 60, "paris": 60, "berlin": 60, "hamburg": 60,
	"european": 60, "cet": 60, "dutch": 60, "new york": -300, "chicago": -360}

// zoneRules are the zones named without saying standard or daylight time, with the daylight
// saving rule of where they are (inDaylightTime): "PT" in July is UTC-7. An abbreviation that says
// which ("PST", "PDT", "CET", "CEST") keeps its offset.
var zoneRules = map[string]string{"et": "us", "ct": "us", "mt": "us", "pt": "us", "eastern": "us", "central": "us",
	"mountain": "us", "pacific": "us", "new york": "us", "chicago": "us", "london": "eu", "uk": "eu", "amsterdam": "eu",
	"rotterdam": "eu", "brussels": "eu", "antwerp": "eu", "paris": "eu", "berlin": "eu", "hamburg": "eu",
	"european": "eu", "dutch": "eu"}

// words splits a space-separated list into a set.
func words(s string) map[string]bool {
	m := map[string]bool{}
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\n' || s[i] == '\t' {
			if start >= 0 {
				m[s[start:i]] = true
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return m
}

// negators are the words after which "yet" continues the negation ("not yet booked") instead of
// starting a clause.
var negators = words(`not haven't hasn't hadn't isn't aren't wasn't weren't don't doesn't didn't`)
