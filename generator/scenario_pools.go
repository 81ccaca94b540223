package generator

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"
)

// The scenarios of a run are drawn without replacement: attempt i of a run takes the i-th
// element of a permutation, drawn from the run's seed, of every pool (businesses, lead persons'
// names, places, situations, twists), so that no two attempts share a business until the run
// has used all of them, nor a lead person's name (about 3,000 and 2,000 of them), and the
// situations and twists go round before any comes back. A permutation is an affine map
// i → (a·i + b) mod n with a prime to n: attempt i's scenario is computed from the run's seed and
// i alone (a resumed run, or a queue worker, draws the same).

// culture is a pool of names people of one language area bear.
type culture struct {
	name  string
	first []string
	last  []string
}

var cultures = []culture{
	{"Dutch", []string{"Bram", "Daan", "Femke", "Joost", "Lieke", "Maud", "Sanne", "Pieter", "Anouk", "Wim", "Esther", "Ruben"},
		[]string{"Bakker", "de Vries", "van Dijk", "Visser", "Smit", "Mulder", "Hoekstra", "Janssen", "Vermeulen", "Dekker", "Brouwer", "de Graaf"}},
	{"German", []string{"Jonas", "Greta", "Lukas", "Katrin", "Matthias", "Anja", "Felix", "Sabine", "Tobias", "Ulrike", "Florian", "Heike"},
		[]string{"Fischer", "Schmidt", "Weber", "Becker", "Hoffmann", "Schulz", "Zimmermann", "Krüger", "Hartmann", "Lange", "Vogel", "Brandt"}},
	{"French", []string{"Chloé", "Hugo", "Camille", "Julien", "Élodie", "Mathieu", "Léa", "Antoine", "Manon", "Nicolas", "Aurélie", "Théo"},
		[]string{"Dubois", "Moreau", "Lambert", "Girard", "Fontaine", "Rousseau", "Bonnet", "Mercier", "Lefèvre", "Chevalier", "Garnier", "Faure"}},
	{"Spanish", []string{"Mateo", "Carmen", "Lucía", "Javier", "Pilar", "Álvaro", "Marta", "Sergio", "Nuria", "Diego", "Rocío", "Andrés"},
		[]string{"García", "Fernández", "López", "Martín", "Sánchez", "Romero", "Navarro", "Torres", "Ruiz", "Molina", "Ortega", "Castillo"}},
	{"Italian", []string{"Luca", "Giulia", "Marco", "Chiara", "Alessandro", "Francesca", "Davide", "Elena", "Matteo", "Silvia", "Stefano", "Valentina"},
		[]string{"Rossi", "Bianchi", "Romano", "Colombo", "Ricci", "Marino", "Greco", "Bruno", "Gallo", "Conti", "Esposito", "Mancini"}},
	{"Polish", []string{"Agnieszka", "Tomasz", "Katarzyna", "Piotr", "Magdalena", "Paweł", "Joanna", "Marcin", "Ewa", "Krzysztof", "Zofia", "Michał"},
		[]string{"Kowalski", "Nowak", "Wiśniewska", "Wójcik", "Kamińska", "Lewandowski", "Zieliński", "Szymańska", "Woźniak", "Dąbrowski", "Kozłowska", "Jankowski"}},
	{"Turkish", []string{"Elif", "Emre", "Zeynep", "Burak", "Ayşe", "Mehmet", "Selin", "Can", "Deniz", "Ozan", "Ebru", "Kerem"},
		[]string{"Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Yıldız", "Aydın", "Öztürk", "Arslan", "Doğan", "Toprak", "Korkmaz"}},
	{"Arabic", []string{"Amira", "Tariq", "Nadia", "Bilal", "Yasmin", "Omar", "Layla", "Karim", "Samira", "Youssef", "Rania", "Hassan"},
		[]string{"Haddad", "Khalil", "Mansour", "Nasser", "Saleh", "Farouk", "Hamdan", "Aziz", "Rahman", "Qasim", "Bakri", "Darwish"}},
	{"Nordic", []string{"Astrid", "Lars", "Ingrid", "Erik", "Sigrid", "Henrik", "Maja", "Oskar", "Linnea", "Nils", "Freja", "Anders"},
		[]string{"Lindqvist", "Eriksen", "Johansson", "Nilsson", "Andersen", "Berg", "Dahl", "Lund", "Holm", "Sandberg", "Nyström", "Virtanen"}},
	{"Chinese", []string{"Xin", "Wei", "Mei", "Jun", "Ling", "Hao", "Yan", "Bo", "Hui", "Lei", "Qing", "Tao"},
		[]string{"Wang", "Li", "Zhang", "Liu", "Chen", "Yang", "Huang", "Zhao", "Wu", "Zhou", "Xu", "Sun"}},
	{"Japanese", []string{"Haruto", "Yui", "Sota", "Aoi", "Ren", "Hina", "Kaito", "Sakura", "Riku", "Mei", "Yuto", "Naoko"},
		[]string{"Sato", "Suzuki", "Takahashi", "Tanaka", "Watanabe", "Ito", "Yamamoto", "Nakamura", "Kobayashi", "Kato", "Yoshida", "Matsumoto"}},
	{"Indian", []string{"Priya", "Arjun", "Ananya", "Rohan", "Kavya", "Vikram", "Isha", "Rahul", "Meera", "Aditya", "Divya", "Sanjay"},
		[]string{"Sharma", "Patel", "Iyer", "Reddy", "Nair", "Gupta", "Mehta", "Rao", "Desai", "Kulkarni", "Menon", "Joshi"}},
	{"West African", []string{"Kofi", "Ama", "Chidi", "Ngozi", "Kwame", "Adaeze", "Tunde", "Folake", "Emeka", "Abena", "Yaw", "Chiamaka"},
		[]string{"Okafor", "Mensah", "Adeyemi", "Boateng", "Eze", "Owusu", "Nwosu", "Asante", "Balogun", "Okeke", "Appiah", "Obi"}},
	{"Portuguese", []string{"João", "Inês", "Tiago", "Beatriz", "Rui", "Mariana", "Duarte", "Catarina", "Gonçalo", "Sofia", "Nuno", "Leonor"},
		[]string{"Silva", "Santos", "Ferreira", "Pereira", "Oliveira", "Costa", "Rodrigues", "Martins", "Sousa", "Gomes", "Lopes", "Marques"}},
	{"Greek", []string{"Eleni", "Nikos", "Sofia", "Giorgos", "Katerina", "Dimitris", "Maria", "Kostas", "Ioanna", "Yannis", "Despina", "Petros"},
		[]string{"Papadopoulos", "Georgiou", "Nikolaou", "Vlachos", "Christodoulou", "Karagiannis", "Oikonomou", "Makris", "Pappas", "Antoniou", "Dimitriou", "Stavrou"}},
	{"Slavic", []string{"Goran", "Olga", "Dmitri", "Jelena", "Ivan", "Milena", "Nikola", "Vesna", "Andrej", "Tatiana", "Marko", "Irina"},
		[]string{"Ivanova", "Petrović", "Novak", "Horvat", "Popov", "Kovač", "Jovanović", "Marković", "Volkova", "Kuznetsov", "Babić", "Pavlović"}},
	{"Irish and British", []string{"Siobhán", "Liam", "Aoife", "Callum", "Niamh", "Owen", "Eilidh", "Rhys", "Fiona", "Declan", "Imogen", "Gareth"},
		[]string{"Murphy", "O'Brien", "Walsh", "Campbell", "Evans", "Kelly", "MacLeod", "Hughes", "Byrne", "Thomson", "Doyle", "Price"}},
}

// businessStems name businesses; with a domain's suffixes they make its names.
var businessStems = []string{"Alder", "Beacon", "Cobalt", "Dune", "Ember", "Fjord", "Granite", "Harbor", "Iris", "Juniper",
	"Kestrel", "Linden", "Meridian", "Nova", "Orchard", "Pier", "Quarry", "Riverside", "Saffron", "Tidewater",
	"Umber", "Vale", "Willow", "Zephyr", "Amstel", "Brink", "Citadel", "Delta", "Eastgate", "Fairway", "Greenway", "Hollow",
	"Akasha", "Bergmann", "Castellan", "Dorado", "Edelweiss", "Falcone", "Goldoni", "Hanami", "Ilex", "Jansen",
	"Kiran", "Lumen", "Mistral", "Nordkap", "Olivar", "Paloma", "Quercus", "Rosmarin", "Sakura", "Tamarind",
	"Ulmus", "Verano", "Wisteria", "Xanthe", "Yarrow", "Zuider", "Aurora", "Basalt", "Cedro", "Drava",
	"Estuary", "Fennel", "Gulf", "Heron", "Indigo", "Jasper", "Kelp", "Lagoon", "Magnolia", "Nectar",
	"Obsidian", "Pinnacle", "Quill", "Rowan", "Solstice", "Thistle", "Upland", "Vireo", "Wren", "Yew",
	"Acacia", "Bramble", "Cypress", "Dahlia", "Elm", "Foxglove", "Ginkgo", "Hazel", "Ivory", "Jade",
	"Kauri", "Larch", "Maple", "Nutmeg", "Oak", "Poplar", "Rye", "Sorrel", "Teak", "Vetiver",
	"Atlas", "Boreal", "Corvid", "Dover", "Equinox", "Flint", "Glacier", "Horizon", "Isthmus", "Keystone",
	"Lighthouse", "Monsoon", "Nimbus", "Oasis", "Prairie", "Ridge", "Sierra", "Tundra", "Vista", "Westwind"}

// places are cities the businesses are in.
var places = []string{"Utrecht", "Ghent", "Leeds", "Lyon", "Porto", "Graz", "Aarhus", "Bremen", "Tampere", "Bilbao",
	"Cork", "Brno", "Eindhoven", "Malmö", "Turin", "Leuven", "Bristol", "Basel", "Gdańsk", "Nantes",
	"Groningen", "Antwerp", "Glasgow", "Bordeaux", "Coimbra", "Linz", "Odense", "Leipzig", "Turku", "Valencia",
	"Galway", "Ostrava", "Maastricht", "Gothenburg", "Bologna", "Liège", "Cardiff", "Lausanne", "Wrocław", "Rennes",
	"Izmir", "Thessaloniki", "Ljubljana", "Zagreb", "Kraków", "Seville", "Lille", "Dresden", "Bergen", "Tallinn",
	"Riga", "Vilnius", "Cluj-Napoca", "Plovdiv", "Trieste", "Innsbruck", "Freiburg", "Aalborg", "Uppsala", "Nijmegen"}

var moreSituations = []string{
	"a supplier changed its terms, and open orders have to be checked against the new ones",
	"two colleagues gave conflicting instructions, and the more recent one is in a different place",
	"an audit is coming, and the evidence for a few items has to be gathered and filed",
	"a customer's data must be corrected everywhere it appears, and nowhere else",
	"the user is about to go on leave, and their open items must be handed over cleanly",
	"a price or rate changed mid-month, and only some of the affected items were already updated",
	"an order arrived incomplete, and the missing part has to be chased without double-ordering",
	"a report a manager relies on has an error that came from a wrong source file",
	"a shared mailbox has piled up, and replies must go out in the right order of urgency",
	"a meeting has to be found that works for people in two time zones",
	"a colleague asks for personal data of another person that they should not get in full",
	"a vendor sends an invoice that does not match the agreed quote",
	"a list in one system must be reconciled with the copy in another",
	"a cancellation has knock-on effects on bookings, messages and records",
	"a new policy document changes how a routine request must be handled from now on",
	"a request comes in a language the rest of the thread is not written in",
}

var moreTwists = []string{
	"an older version of the key document is still lying around",
	"a number appears in two units (or currencies) and only one is right for the request",
	"the person who asked is not the one who must receive the answer",
	"a reply must keep someone in copy, and another person out of it",
	"an attachment holds the fact the message body leaves out",
}

// allSituations and allTwists are every situation and twist a scenario may have.
var (
	allSituations = append(append([]string{}, situations...), moreSituations...)
	allTwists     = append(append([]string{}, twists...), moreTwists...)
)

// permutation is the affine bijection i → (a·i + b) mod n drawn from a seed and a label.
type permutation struct{ a, b, n uint64 }

func newPermutation(seed int64, label string, n int) permutation {
	h := fnv.New64a()
	h.Write([]byte(label))
	r := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	p := permutation{n: uint64(n)}
	if n <= 1 {
		return p
	}
	p.a = 1 + r.Uint64N(p.n-1)
	for gcd(p.a, p.n) != 1 {
		p.a = p.a%(p.n-1) + 1
	}
	p.b = r.Uint64N(p.n)
	return p
}

func (p permutation) at(i int) int {
	if p.n <= 1 {
		return 0
	}
	return int((p.a*(uint64(i)%p.n) + p.b) % p.n)
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// names is every (culture, first, last) a lead person may be called, flattened.
func leadName(k int) (c *culture, first, last string) {
	for ci := range cultures {
		c = &cultures[ci]
		n := len(c.first) * len(c.last)
		if k < n {
			return c, c.first[k/len(c.last)], c.last[k%len(c.last)]
		}
		k -= n
	}
	panic("leadName: out of range")
}

func leadNames() int {
	n := 0
	for _, c := range cultures {
		n += len(c.first) * len(c.last)
	}
	return n
}

// NewScenario is the scenario of the first attempt of a run of seed seed.
func NewScenario(seed int64) Scenario { return RunScenario(seed, 0) }

// RunScenario is the scenario of attempt i of a run whose first attempt has seed runSeed.
func RunScenario(runSeed int64, i int) Scenario {
	all := append(append([]domain{}, domains...), moreDomains...)
	biz := newPermutation(runSeed, "business", len(businessStems)*len(all)).at(i)
	stem, d := businessStems[biz/len(all)], all[biz%len(all)]
	suffix := d.suffixes[(biz/len(all))%len(d.suffixes)]
	r := rand.New(rand.NewPCG(uint64(runSeed), uint64(i)+0x5ce7a210))
	s := Scenario{
		Seed:      runSeed + int64(i),
		Domain:    d.name,
		Company:   stem + " " + suffix,
		City:      places[newPermutation(runSeed, "place", len(places)).at(i)],
		Records:   d.records,
		Event:     d.event,
		Client:    d.clients[r.IntN(len(d.clients))],
		Situation: allSituations[newPermutation(runSeed, "situation", len(allSituations)).at(i)],
		Twist:     allTwists[newPermutation(runSeed, "twist", len(allTwists)).at(i)],
	}
	s.MailHost = slug(stem+" "+strings.Fields(suffix)[0]) + ".example"
	s.Docs = append([]string{}, d.docs...)
	r.Shuffle(len(s.Docs), func(i, j int) { s.Docs[i], s.Docs[j] = s.Docs[j], s.Docs[i] })
	roles := append([]string{}, d.roles...)
	r.Shuffle(len(roles), func(i, j int) { roles[i], roles[j] = roles[j], roles[i] })

	_, first, last := leadName(newPermutation(runSeed, "lead", leadNames()).at(i))
	usedFirst := map[string]bool{emailLocal(first): true}
	usedLast := map[string]bool{last: true}
	s.User = Person{Name: first + " " + last, Role: roles[0], Email: emailLocal(first) + "@" + s.MailHost}
	for _, role := range roles[1:] {
		// colleagues from any culture: no first name (their mail address) or last name twice
		var f, l string
		for {
			c := &cultures[r.IntN(len(cultures))]
			f, l = c.first[r.IntN(len(c.first))], c.last[r.IntN(len(c.last))]
			if !usedFirst[emailLocal(f)] && !usedLast[l] {
				break
			}
		}
		usedFirst[emailLocal(f)], usedLast[l] = true, true
		s.People = append(s.People, Person{Name: f + " " + l, Role: role, Email: emailLocal(f) + "@" + s.MailHost})
	}
	return s
}

// fold writes a letter of a name in ASCII ("" for one it drops).
func fold(c rune) string {
	switch {
	case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		return string(c)
	}
	for _, f := range []struct{ from, to string }{
		{"àáâãäåąă", "a"}, {"çćč", "c"}, {"ďđ", "d"}, {"èéêëęěė", "e"}, {"ğ", "g"}, {"ìíîïı", "i"},
		{"ł", "l"}, {"ñńň", "n"}, {"òóôõöøő", "o"}, {"řŕ", "r"}, {"śšş", "s"}, {"ťţ", "t"},
		{"ùúûüůű", "u"}, {"ýÿ", "y"}, {"źżž", "z"}, {"ß", "ss"}, {"æ", "ae"}, {"œ", "oe"},
	} {
		if strings.ContainsRune(f.from, c) {
			return f.to
		}
	}
	return ""
}

// emailLocal is the mail name of a first name (ASCII, lower case).
func emailLocal(first string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(first) {
		b.WriteString(fold(c))
	}
	return b.String()
}

// slug is a name as a mail domain's label: ASCII letters and digits, words joined by "-".
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		f := fold(c)
		if f == "" {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteString(f)
	}
	return b.String()
}

var moreDomains = []domain{
	{"logistics company", []string{"Logistics", "Freight", "Transport"}, []string{"dispatcher", "customer service agent", "fleet planner", "operations manager"},
		[]string{"rate sheet", "delivery schedule", "damage claims log"}, "shipments", "carrier review", []string{"a shipping line", "a retail chain"}},
	{"IT service desk", []string{"IT Services", "Systems", "Support"}, []string{"service desk agent", "system administrator", "security officer", "IT manager"},
		[]string{"asset register", "access request log", "incident report"}, "tickets", "change advisory board", []string{"a software vendor", "a managed hosting provider"}},
	{"fitness club", []string{"Fitness", "Gym", "Sports"}, []string{"membership adviser", "personal trainer", "front desk lead", "club manager"},
		[]string{"class timetable", "membership export", "equipment maintenance log"}, "memberships", "instructor meeting", []string{"an equipment supplier", "a corporate partner"}},
	{"publishing house", []string{"Press", "Books", "Publishing"}, []string{"editor", "production manager", "rights manager", "publisher"},
		[]string{"production schedule", "royalty statement", "rights list"}, "manuscripts", "editorial meeting", []string{"a printer", "a literary agency"}},
	{"catering company", []string{"Catering", "Kitchen", "Foods"}, []string{"event chef", "sales coordinator", "purchasing manager", "owner"},
		[]string{"menu costing", "allergen matrix", "supplier price list"}, "catering orders", "menu tasting", []string{"a wholesaler", "a conference centre"}},
	{"pharmacy", []string{"Pharmacy", "Apotheek", "Chemists"}, []string{"pharmacist", "pharmacy assistant", "stock manager", "owner"},
		[]string{"stock list", "recall notice", "opening hours rota"}, "prescriptions", "team briefing", []string{"a drug wholesaler", "a GP practice"}},
	{"language school", []string{"Language Institute", "Academy", "School of Languages"}, []string{"course coordinator", "teacher", "admissions officer", "director"},
		[]string{"course calendar", "enrolment list", "fee schedule"}, "enrolments", "placement test day", []string{"a corporate client", "an exam board"}},
	{"marketing agency", []string{"Creative", "Media", "Agency"}, []string{"account manager", "copywriter", "media planner", "managing director"},
		[]string{"campaign brief", "media plan", "invoice overview"}, "campaigns", "client pitch", []string{"a consumer brand", "a printing house"}},
	{"nursing home", []string{"Care Home", "Zorg", "Residences"}, []string{"care coordinator", "nurse", "activities organiser", "location manager"},
		[]string{"care plan overview", "visiting schedule", "medication list"}, "resident records", "family meeting", []string{"a home-care agency", "a health insurer"}},
	{"bicycle shop", []string{"Cycles", "Fietsen", "Bikes"}, []string{"mechanic", "sales assistant", "workshop planner", "owner"},
		[]string{"repair price list", "parts order sheet", "lease contracts"}, "repair jobs", "supplier visit", []string{"a parts distributor", "a lease company"}},
}
