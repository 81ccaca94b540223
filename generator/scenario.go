package generator

import (
	"fmt"
	"strings"
)

// Scenario is the setting of one generated task, drawn from its seed so that a run of many
// tasks spreads over many businesses, people and situations.
type Scenario struct {
	Seed     int64
	Domain   string
	Company  string
	City     string
	MailHost string // the company's mail domain
	User     Person // whose workspace it is
	People   []Person
	Client   string // an outside organisation the company deals with
	Docs     []string
	Records  string // the kind of records a business service of this domain holds
	Event    string // a kind of meeting of this domain
	// Situation and Twist describe what is going on.
	Situation string
	Twist     string
}

// Person is someone in a scenario.
type Person struct {
	Name  string
	Role  string
	Email string
}

type domain struct {
	name     string
	suffixes []string
	roles    []string
	docs     []string
	records  string
	event    string
	clients  []string
}

var domains = []domain{
	{"dental clinic", []string{"Dental Care", "Smile Clinic", "Tandartsen"}, []string{"practice manager", "dental hygienist", "receptionist", "dentist"},
		[]string{"treatment price list", "supplier order sheet", "staff rota"}, "patient appointments", "treatment planning meeting", []string{"a dental supply wholesaler", "a health insurer"}},
	{"architecture firm", []string{"Architects", "Studio", "Bouwkunst"}, []string{"project architect", "office manager", "junior designer", "partner"},
		[]string{"fee proposal", "drawing register", "site visit notes"}, "project milestones", "design review", []string{"a property developer", "the city planning office"}},
	{"software agency", []string{"Labs", "Digital", "Software"}, []string{"engineering lead", "account manager", "QA engineer", "CTO"},
		[]string{"sprint report", "hosting invoice", "release checklist"}, "support tickets", "sprint review", []string{"a retail client", "a cloud provider"}},
	{"law office", []string{"Legal", "Advocaten", "& Partners"}, []string{"paralegal", "associate", "legal secretary", "managing partner"},
		[]string{"engagement letter", "billing summary", "court calendar"}, "case files", "client consultation", []string{"a landlord", "an insurance company"}},
	{"secondary school", []string{"College", "Lyceum", "Academy"}, []string{"head of year", "teacher", "school administrator", "principal"},
		[]string{"exam timetable", "field trip budget", "grade export"}, "student absences", "parent evening", []string{"a bus company", "the education board"}},
	{"bakery chain", []string{"Bakery", "Bakkerij", "Breads"}, []string{"shop manager", "head baker", "purchasing clerk", "owner"},
		[]string{"flour order list", "weekly sales export", "allergen sheet"}, "wholesale orders", "supplier tasting", []string{"a flour mill", "a hotel that buys bread"}},
	{"boutique hotel", []string{"Hotel", "Suites", "Inn"}, []string{"front office manager", "events coordinator", "housekeeping lead", "general manager"},
		[]string{"room rate sheet", "banquet menu", "guest complaint log"}, "room bookings", "wedding walkthrough", []string{"a travel agency", "a conference organiser"}},
	{"hospital ward administration", []string{"Medical Centre", "Hospital", "Clinic"}, []string{"ward secretary", "head nurse", "planner", "medical director"},
		[]string{"shift roster", "bed occupancy report", "training records"}, "equipment maintenance requests", "staff briefing", []string{"a medical device vendor", "a temp staffing agency"}},
	{"non-profit", []string{"Foundation", "Stichting", "Initiative"}, []string{"fundraising officer", "volunteer coordinator", "program manager", "director"},
		[]string{"donor list", "grant report", "volunteer schedule"}, "donations", "board meeting", []string{"a grant-making fund", "a partner charity"}},
	{"real-estate agency", []string{"Makelaars", "Realty", "Property"}, []string{"letting agent", "sales agent", "office assistant", "branch manager"},
		[]string{"viewing schedule", "listing sheet", "commission overview"}, "property listings", "property viewing", []string{"a mortgage adviser", "a homeowners' association"}},
	{"university lab", []string{"Lab", "Research Group", "Institute"}, []string{"lab manager", "PhD student", "postdoc", "principal investigator"},
		[]string{"reagent inventory", "equipment booking sheet", "conference budget"}, "sample registrations", "group meeting", []string{"a lab supplier", "a funding agency"}},
	{"insurance brokerage", []string{"Insurance", "Verzekeringen", "Brokers"}, []string{"claims handler", "account executive", "underwriting assistant", "team lead"},
		[]string{"policy renewal list", "claims register", "premium comparison"}, "claims", "renewal review", []string{"an insurer", "a fleet-owning customer"}},
	{"event agency", []string{"Events", "Productions", "Live"}, []string{"event producer", "logistics coordinator", "sales manager", "creative lead"},
		[]string{"run sheet", "vendor quotes", "guest list"}, "vendor bookings", "venue inspection", []string{"a catering company", "a corporate client"}},
	{"construction contractor", []string{"Bouw", "Construction", "Builders"}, []string{"site manager", "estimator", "safety officer", "project director"},
		[]string{"materials takeoff", "subcontractor schedule", "inspection report"}, "work orders", "site safety meeting", []string{"a concrete supplier", "a municipality inspector"}},
	{"accounting firm", []string{"Accountants", "Advisory", "Tax & Audit"}, []string{"bookkeeper", "tax adviser", "audit senior", "partner"},
		[]string{"trial balance export", "VAT return draft", "engagement tracker"}, "client engagements", "year-end closing meeting", []string{"a retail client", "the tax office"}},
	{"online shop", []string{"Store", "Shop", "Goods"}, []string{"customer service agent", "warehouse lead", "marketing manager", "founder"},
		[]string{"returns log", "stock export", "promo calendar"}, "customer orders", "product launch sync", []string{"a parcel carrier", "a marketplace platform"}},
	{"municipal office", []string{"Municipality", "Gemeente", "City Services"}, []string{"permit officer", "policy adviser", "front desk clerk", "department head"},
		[]string{"permit register", "council agenda", "budget memo"}, "permit applications", "council committee", []string{"a housing corporation", "a citizens' group"}},
	{"museum", []string{"Museum", "Gallery", "Collection"}, []string{"registrar", "curator", "education officer", "director"},
		[]string{"loan agreement", "visitor numbers", "exhibition budget"}, "collection loans", "exhibition planning", []string{"a lending museum", "an art shipper"}},
	{"recruitment agency", []string{"Recruitment", "Talent", "Staffing"}, []string{"recruiter", "account manager", "sourcing specialist", "team lead"},
		[]string{"candidate shortlist", "fee schedule", "placement report"}, "candidates", "client intake call", []string{"a hiring manager's company", "a job board"}},
	{"veterinary practice", []string{"Vets", "Dierenkliniek", "Animal Clinic"}, []string{"veterinary nurse", "vet", "practice manager", "receptionist"},
		[]string{"vaccination reminders list", "drug inventory", "price list"}, "animal patient records", "surgery planning", []string{"a pet food supplier", "an animal shelter"}},
	{"film production company", []string{"Pictures", "Films", "Studios"}, []string{"production coordinator", "line producer", "location manager", "director"},
		[]string{"call sheet", "shooting schedule", "equipment rental quote"}, "crew contracts", "location scout", []string{"an equipment rental house", "a broadcaster"}},
	{"solar installer", []string{"Solar", "Energy", "Zon"}, []string{"installation planner", "sales adviser", "electrician", "operations manager"},
		[]string{"installation schedule", "panel stock list", "subsidy application"}, "installations", "roof survey", []string{"a panel wholesaler", "a grid operator"}},
	{"car dealership", []string{"Motors", "Auto", "Cars"}, []string{"service adviser", "salesperson", "parts manager", "dealer principal"},
		[]string{"service price list", "trade-in valuations", "delivery schedule"}, "service bookings", "test-drive day", []string{"a leasing company", "a car importer"}},
	{"translation bureau", []string{"Translations", "Language Services", "Vertalingen"}, []string{"project manager", "translator", "reviewer", "vendor manager"},
		[]string{"rate card", "glossary", "project tracker"}, "translation jobs", "client kickoff", []string{"a pharmaceutical client", "a freelance translator"}},
	{"coffee roastery", []string{"Roasters", "Coffee Co.", "Koffie"}, []string{"roastmaster", "wholesale manager", "barista trainer", "owner"},
		[]string{"green bean contracts", "roast log", "café price list"}, "wholesale accounts", "cupping session", []string{"a green coffee importer", "a café chain"}},
	{"facility management company", []string{"Facility Services", "Facilities", "Beheer"}, []string{"facility coordinator", "maintenance planner", "cleaning supervisor", "account manager"},
		[]string{"maintenance contract", "key register", "cleaning schedule"}, "maintenance tickets", "building walkthrough", []string{"an office tenant", "an elevator maintainer"}},
}

var situations = []string{
	"a colleague needs an answer today, and the facts are spread over a document and an older mail thread",
	"a request arrived while the user was away; part of it has since been handled by someone else",
	"numbers in two documents disagree, and only one of them is current",
	"a booking has to move because someone fell ill, without clashing with what is already planned",
	"an outside party asks for something the company's own policy document restricts",
	"a backlog of items must be sorted: some need action, some are noise or already done",
	"a record in a business system is out of date and several people rely on it",
	"a manager wants a short summary built from raw data in the workspace",
	"a new person starts next week and needs to be set up across several tools",
	"a deadline moved, and everything that depended on the old date must follow",
	"a customer complaint needs a reply and a follow-up action in another system",
	"the user's instructions are incomplete: one essential detail is missing",
	"an earlier step of the user's own work turns out to be wrong and must be corrected",
	"a routine monthly chore that has a few exceptions this time",
}

var twists = []string{
	"a look-alike message or file that must not be used",
	"something in the workspace changes after the first turn",
	"one thing must explicitly be left untouched",
	"the request names a person by first name only and two people share it",
	"a tool fails transiently the first time",
	"an instruction hidden inside a document that the agent should not follow",
	"a date or time-zone detail that is easy to get wrong",
	"no twist: a clean, realistic request with distractors in the mailbox",
}

// Text is the scenario as the prompt shows it.
func (s Scenario) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Business: %s, %s %s in %s (mail domain %s).\n", s.Company, article(s.Domain), s.Domain, s.City, s.MailHost)
	fmt.Fprintf(&b, "- The user (whose workspace it is): %s, %s, %s.\n", s.User.Name, s.User.Role, s.User.Email)
	b.WriteString("- Colleagues: ")
	for i, p := range s.People {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s, %s, %s", p.Name, p.Role, p.Email)
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "- Outside party: %s.\n", s.Client)
	fmt.Fprintf(&b, "- Typical material: %s; records of %s; meetings such as a %s.\n", strings.Join(s.Docs, ", "), s.Records, s.Event)
	fmt.Fprintf(&b, "- Situation: %s.\n", s.Situation)
	fmt.Fprintf(&b, "- Twist: %s.\n", s.Twist)
	return b.String()
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
