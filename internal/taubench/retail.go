// Package taubench is a task at the full size of τ-bench's retail domain (Yao et al. 2024), for
// the benchmark that compares an episode here with τ-bench's own Python episode
// (docs/benchmarks.md): the retail schema at its real size, 500 users, 1,000 orders and 50
// products with about 600 variants, generated here (τ-bench's data is not copied), the domain's
// tools written against ws.db so that each touches only its records, and a verifier that
// compares the whole database with the reference's end state.
//
// The gold episode mirrors the first task of τ-bench's retail test split: find the user by name
// and zip, read the order and the two products, and exchange two delivered items for other
// variants.
package taubench

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// The sizes of τ-bench's retail data.
const (
	Users    = 500
	Orders   = 1000
	Products = 50
)

var (
	firstNames = []string{"Yusuf", "Noah", "Ava", "Mia", "Liam", "Sofia", "Omar", "Lucas", "Aarav", "Emma", "Ivan", "Chen", "Fatima",
		"Mei", "Raj", "Sara", "Daiki", "Olivia", "Ethan", "Amelia", "Harper", "James", "Isabella", "Mohamed", "Anya"}
	lastNames = []string{"Rossi", "Brown", "Kim", "Garcia", "Li", "Ahmed", "Sanchez", "Patel", "Johnson", "Nguyen", "Silva", "Ito",
		"Khan", "Moore", "Lopez", "Wilson", "Santos", "Muller", "Lee", "Thomas"}
	cities = []struct{ city, state, zip string }{{"Philadelphia", "PA", "191"}, {"Denver", "CO", "802"}, {"New York", "NY", "100"},
		{"Austin", "TX", "787"}, {"Seattle", "WA", "981"}, {"Chicago", "IL", "606"}, {"San Diego", "CA", "921"}, {"Boston", "MA", "021"}}
	streets      = []string{"River Road", "Sunset Drive", "Main Street", "Lakeview Drive", "Oak Street", "Hillcrest Drive", "Elm Avenue"}
	productNames = []string{"T-Shirt", "Water Bottle", "Office Chair", "Mechanical Keyboard", "Smart Thermostat", "Desk Lamp",
		"Running Shoes", "Backpack", "Headphones", "Smart Watch", "Vacuum Cleaner", "Coffee Maker", "Bluetooth Speaker", "Laptop",
		"Tablet", "Hiking Boots", "Yoga Mat", "Wall Clock", "Electric Kettle", "Action Camera", "Bookshelf", "Cycling Helmet",
		"Digital Camera", "E-Reader", "Air Purifier", "Fleece Jacket", "Gaming Mouse", "Garden Hose", "Indoor Security Camera",
		"Jigsaw Puzzle", "LED Light Bulb", "Luggage Set", "Makeup Kit", "Notebook", "Patio Umbrella", "Perfume", "Pet Bed",
		"Portable Charger", "Skateboard", "Sneakers", "Sunglasses", "Tea Kettle", "Wireless Earbuds", "Wristwatch", "Bicycle",
		"Cleaner", "Dumbbell Set", "Electric Toothbrush", "Grill", "Smartphone"}
	optionValues = map[string][]string{
		"color": {"black", "white", "blue", "red", "green", "silver"}, "size": {"S", "M", "L", "XL"},
		"material": {"cotton", "polyester", "glass", "steel", "plastic", "leather"}, "style": {"standard", "compact", "deluxe"},
	}
	optionNames = []string{"color", "size", "material", "style"}
)

// Data is the database: one JSON array of records per collection, each record with its "id".
// Besides τ-bench's users, orders and products, it holds the look-ups a database would index, so
// that each tool reads only the records it needs: users by email and by name and zip, variants
// by item id (their product, price and availability) and payment methods by id.
type Data struct {
	Users, Orders, Products, ByEmail, ByNameZip, Variants, Payments string
	// Gold are the gold calls, as tool name and arguments (the first task of the test split).
	Gold []Call
}

// Call is one tool call.
type Call struct {
	Tool string
	Args *jsonv.Object
}

type variant struct {
	id      string
	options *jsonv.Object
	price   float64
	avail   bool
}

type product struct {
	id, name string
	variants []variant
}

type user struct {
	id, first, last, zip, email string
	address                     *jsonv.Object
	payment                     []string // payment method ids, the first a credit card
	methods                     *jsonv.Object
	orders                      []jsonv.Value
}

// Generate makes the database, the same for the same seed.
func Generate(seed uint64) *Data {
	r := rand.New(rand.NewPCG(seed, 24))
	taken := map[string]bool{} // every id and look-up key is drawn again until it is new
	unique := func(draw func() string) string {
		for {
			if s := draw(); !taken[s] {
				taken[s] = true
				return s
			}
		}
	}
	draw := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		b[0] = byte('1' + r.IntN(9))
		return string(b)
	}
	digits := func(n int) string { return unique(func() string { return draw(n) }) }
	price := func(lo, hi float64) float64 { return float64(int((lo+r.Float64()*(hi-lo))*100)) / 100 }

	products := make([]*product, Products)
	var productRecs, variantRecs, paymentRecs []jsonv.Value
	for i := range products {
		p := &product{id: digits(10), name: productNames[i]}
		base := price(10, 500)
		variants := &jsonv.Object{}
		for range 9 + r.IntN(7) {
			opts := &jsonv.Object{}
			for _, o := range optionNames[:2+r.IntN(3)] {
				opts.Set(o, optionValues[o][r.IntN(len(optionValues[o]))])
			}
			v := variant{id: digits(10), options: opts, price: price(base*0.9, base*1.1), avail: r.IntN(7) != 0}
			p.variants = append(p.variants, v)
			variants.Set(v.id, jsonv.NewObject("item_id", v.id, "options", opts, "available", v.avail, "price", v.price))
			variantRecs = append(variantRecs, jsonv.NewObject("id", v.id, "product_id", p.id, "available", v.avail, "price", v.price))
		}
		products[i] = p
		productRecs = append(productRecs, jsonv.NewObject("id", p.id, "name", p.name, "product_id", p.id, "variants", variants))
	}

	users := make([]*user, Users)
	var byEmail, byNameZip []jsonv.Value
	for i := range users {
		first, last := firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))]
		c := cities[r.IntN(len(cities))]
		u := &user{first: first, last: last, methods: &jsonv.Object{}}
		u.id = unique(func() string { return fmt.Sprintf("%s_%s_%s", strings.ToLower(first), strings.ToLower(last), draw(4)) })
		unique(func() string { u.zip = c.zip + draw(2); return strings.ToLower(first + " " + last + " " + u.zip) })
		u.email = strings.ReplaceAll(u.id, "_", ".") + "@example.com"
		u.address = jsonv.NewObject("address1", fmt.Sprintf("%d %s", 100+r.IntN(900), streets[r.IntN(len(streets))]),
			"address2", fmt.Sprintf("Suite %d", 100+r.IntN(900)), "city", c.city, "country", "USA", "state", c.state, "zip", u.zip)
		card := "credit_card_" + digits(7)
		u.payment = append(u.payment, card)
		u.methods.Set(card, jsonv.NewObject("source", "credit_card", "brand", []string{"visa", "mastercard"}[r.IntN(2)],
			"last_four", digits(4), "id", card))
		paymentRecs = append(paymentRecs, jsonv.NewObject("id", card, "user_id", u.id, "source", "credit_card"))
		if r.IntN(2) == 0 {
			gift := "gift_card_" + digits(7)
			balance := float64(r.IntN(200))
			u.payment = append(u.payment, gift)
			u.methods.Set(gift, jsonv.NewObject("source", "gift_card", "balance", balance, "id", gift))
			paymentRecs = append(paymentRecs, jsonv.NewObject("id", gift, "user_id", u.id, "source", "gift_card", "balance", balance))
		}
		users[i] = u
		byEmail = append(byEmail, jsonv.NewObject("id", u.email, "user_id", u.id))
		byNameZip = append(byNameZip, jsonv.NewObject("id", strings.ToLower(first+" "+last+" "+u.zip), "user_id", u.id))
	}

	d := &Data{}
	var orderRecs []jsonv.Value
	for i := range Orders {
		u := users[i%Users]
		if i == 0 {
			u = users[7] // the user of the gold task
		}
		id := "#W" + digits(7)
		status := []string{"pending", "processed", "delivered", "delivered", "cancelled"}[r.IntN(5)]
		var items []jsonv.Value
		var itemIDs []jsonv.Value
		total := 0.0
		for range 1 + r.IntN(5) {
			p := products[r.IntN(len(products))]
			v := p.variants[r.IntN(len(p.variants))]
			items = append(items, jsonv.NewObject("name", p.name, "product_id", p.id, "item_id", v.id, "price", v.price, "options", v.options))
			itemIDs = append(itemIDs, v.id)
			total += v.price
		}
		if i == 0 { // the gold order: delivered, its first two items exchanged for other variants
			status = "delivered"
			items, itemIDs, total = items[:0], itemIDs[:0], 0
			for k := range 2 {
				p := products[3+k]
				v := p.variants[0]
				items = append(items, jsonv.NewObject("name", p.name, "product_id", p.id, "item_id", v.id, "price", v.price, "options", v.options))
				itemIDs = append(itemIDs, v.id)
				total += v.price
			}
			d.Gold = []Call{
				{"find_user_id_by_name_zip", jsonv.NewObject("first_name", u.first, "last_name", u.last, "zip", u.zip)},
				{"get_order_details", jsonv.NewObject("order_id", id)},
				{"get_product_details", jsonv.NewObject("product_id", products[3].id)},
				{"get_product_details", jsonv.NewObject("product_id", products[4].id)},
				{"exchange_delivered_order_items", jsonv.NewObject("order_id", id,
					"item_ids", []jsonv.Value{itemIDs[0], itemIDs[1]},
					"new_item_ids", []jsonv.Value{availableOther(products[3]), availableOther(products[4])},
					"payment_method_id", u.payment[0])},
			}
		}
		var fulfillments []jsonv.Value
		if status != "pending" && status != "cancelled" {
			fulfillments = append(fulfillments, jsonv.NewObject("tracking_id", []jsonv.Value{digits(12)}, "item_ids", itemIDs))
		}
		order := jsonv.NewObject("id", id, "order_id", id, "user_id", u.id, "address", u.address, "items", items,
			"fulfillments", orEmpty(fulfillments), "status", status,
			"payment_history", []jsonv.Value{jsonv.NewObject("transaction_type", "payment", "amount", float64(int(total*100))/100,
				"payment_method_id", u.payment[r.IntN(len(u.payment))])})
		orderRecs = append(orderRecs, order)
		u.orders = append(u.orders, id)
	}
	var userRecs []jsonv.Value
	for _, u := range users {
		userRecs = append(userRecs, jsonv.NewObject("id", u.id, "name", jsonv.NewObject("first_name", u.first, "last_name", u.last),
			"address", u.address, "email", u.email, "payment_methods", u.methods, "orders", orEmpty(u.orders)))
	}
	d.Users, d.Orders, d.Products = jsonv.MustEncode(userRecs), jsonv.MustEncode(orderRecs), jsonv.MustEncode(productRecs)
	d.ByEmail, d.ByNameZip = jsonv.MustEncode(byEmail), jsonv.MustEncode(byNameZip)
	d.Variants, d.Payments = jsonv.MustEncode(variantRecs), jsonv.MustEncode(paymentRecs)
	return d
}

// availableOther is an available variant of p other than its first.
func availableOther(p *product) string {
	for _, v := range p.variants[1:] {
		if v.avail {
			return v.id
		}
	}
	panic("taubench: no other available variant")
}

func orEmpty(v []jsonv.Value) []jsonv.Value {
	if v == nil {
		return []jsonv.Value{}
	}
	return v
}

// Files returns the task's files: retail.star, the task, and data.star, which holds the database
// as JSON texts that setup stores with ws.db.insert_text.
func (d *Data) Files() map[string]string {
	data := fmt.Sprintf("USERS = %q\nORDERS = %q\nPRODUCTS = %q\nBY_EMAIL = %q\nBY_NAME_ZIP = %q\nVARIANTS = %q\nPAYMENTS = %q\n",
		d.Users, d.Orders, d.Products, d.ByEmail, d.ByNameZip, d.Variants, d.Payments)
	var solve strings.Builder
	for _, c := range d.Gold {
		var args []string
		for _, m := range c.Args.Members {
			args = append(args, fmt.Sprintf("%s = %s", m.Key, jsonv.MustEncode(m.Value)))
		}
		fmt.Fprintf(&solve, "    agent.call(%q, %s)\n", c.Tool, strings.Join(args, ", "))
	}
	return map[string]string{"data.star": data, "retail.star": strings.Replace(task, "#SOLVE#\n", solve.String(), 1)}
}

const task = `
load("data.star", "USERS", "ORDERS", "PRODUCTS", "BY_EMAIL", "BY_NAME_ZIP", "VARIANTS", "PAYMENTS")

def _setup(ws):
    ws.db.insert_text("users", USERS)
    ws.db.insert_text("orders", ORDERS)
    ws.db.insert_text("products", PRODUCTS)
    ws.db.insert_text("users_by_email", BY_EMAIL)
    ws.db.insert_text("users_by_name_zip", BY_NAME_ZIP)
    ws.db.insert_text("variants", VARIANTS)
    ws.db.insert_text("payment_methods", PAYMENTS)

def _get(ws, coll, id, what):
    r = ws.db.get(coll, id)
    if r == None:
        fail("Error: %s not found" % what)
    return r

def _find_by_email(ws, email):
    return _get(ws, "users_by_email", email.lower(), "user")["user_id"]

def _find_by_name_zip(ws, first_name, last_name, zip):
    return _get(ws, "users_by_name_zip", (first_name + " " + last_name + " " + zip).lower(), "user")["user_id"]

def _user(ws, user_id):
    return _get(ws, "users", user_id, "user")

def _order(ws, order_id):
    return _get(ws, "orders", order_id, "order")

def _product(ws, product_id):
    return _get(ws, "products", product_id, "product")

def _product_types(ws):
    return {p["name"]: p["product_id"] for p in ws.db.all("products")}

def _count(l, x):
    return len([y for y in l if y == x])

def _check_items(order, item_ids):
    all_ids = [it["item_id"] for it in order["items"]]
    for i in item_ids:
        if _count(item_ids, i) > _count(all_ids, i):
            fail("Error: %s not found" % i)

def _payment(ws, order, payment_method_id):
    pm = ws.db.get("payment_methods", payment_method_id)
    if pm == None or pm["user_id"] != order["user_id"]:
        fail("Error: payment method not found")
    return pm

def _exchange(ws, order_id, item_ids, new_item_ids, payment_method_id):
    order = _order(ws, order_id)
    if order["status"] != "delivered":
        fail("Error: non-delivered order cannot be exchanged")
    _check_items(order, item_ids)
    if len(item_ids) != len(new_item_ids):
        fail("Error: the number of items to be exchanged should match")
    diff = 0.0
    for k in range(len(item_ids)):
        item = [it for it in order["items"] if it["item_id"] == item_ids[k]][0]
        v = ws.db.get("variants", new_item_ids[k])
        if v == None or v["product_id"] != item["product_id"] or not v["available"]:
            fail("Error: new item %s not found or available" % new_item_ids[k])
        diff += v["price"] - item["price"]
    diff = math.round(diff * 100) / 100
    pm = _payment(ws, order, payment_method_id)
    if pm["source"] == "gift_card" and pm["balance"] < diff:
        fail("Error: insufficient gift card balance to pay for the price difference")
    return ws.db.update("orders", order_id, status = "exchange requested", exchange_items = sorted(item_ids),
                        exchange_new_items = sorted(new_item_ids), exchange_payment_method_id = payment_method_id,
                        exchange_price_difference = diff)

def _return(ws, order_id, item_ids, payment_method_id):
    order = _order(ws, order_id)
    if order["status"] != "delivered":
        fail("Error: non-delivered order cannot be returned")
    _check_items(order, item_ids)
    pm = _payment(ws, order, payment_method_id)
    if pm["source"] != "gift_card" and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        fail("Error: payment method should be either the original payment method or a gift card")
    return ws.db.update("orders", order_id, status = "return requested", return_items = sorted(item_ids),
                        return_payment_method_id = payment_method_id)

def _cancel(ws, order_id, reason):
    order = _order(ws, order_id)
    if order["status"] != "pending":
        fail("Error: non-pending order cannot be cancelled")
    if reason not in ["no longer needed", "ordered by mistake"]:
        fail("Error: invalid reason")
    refunds = [{"transaction_type": "refund", "amount": p["amount"], "payment_method_id": p["payment_method_id"]} for p in order["payment_history"]]
    return ws.db.update("orders", order_id, status = "cancelled", cancel_reason = reason, payment_history = order["payment_history"] + refunds)

def _s(desc):
    return param("string", description = desc)

def _ids(desc):
    return param("array", items = "string", description = desc)

TOOLS = [
    tool(name = "find_user_id_by_email", description = "Find user id by email.", params = {"email": _s("The email of the user.")}, impl = _find_by_email),
    tool(name = "find_user_id_by_name_zip", description = "Find user id by first name, last name, and zip code.",
         params = {"first_name": _s("First name."), "last_name": _s("Last name."), "zip": _s("Zip code.")}, impl = _find_by_name_zip),
    tool(name = "get_user_details", description = "Get the details of a user, including their orders.", params = {"user_id": _s("The user id.")}, impl = _user),
    tool(name = "get_order_details", description = "Get the status and details of an order.", params = {"order_id": _s("The order id, such as '#W0000000'.")}, impl = _order),
    tool(name = "get_product_details", description = "Get the inventory details of a product.", params = {"product_id": _s("The product id.")}, impl = _product),
    tool(name = "list_all_product_types", description = "List the name and product id of all product types.", params = {}, impl = _product_types),
    tool(name = "exchange_delivered_order_items", description = "Exchange items in a delivered order to new items of the same product type.",
         params = {"order_id": _s("The order id."), "item_ids": _ids("The item ids to be exchanged."), "new_item_ids": _ids("The item ids to be exchanged for."),
                   "payment_method_id": _s("The payment method id to pay or receive refund for the price difference.")}, impl = _exchange),
    tool(name = "return_delivered_order_items", description = "Return some items of a delivered order.",
         params = {"order_id": _s("The order id."), "item_ids": _ids("The item ids to be returned."), "payment_method_id": _s("The payment method id for the refund.")}, impl = _return),
    tool(name = "cancel_pending_order", description = "Cancel a pending order.",
         params = {"order_id": _s("The order id."), "reason": _s("'no longer needed' or 'ordered by mistake'.")}, impl = _cancel),
]

def _solve(agent):
#SOLVE#
    agent.reply("Your exchange is requested.")

def _verify(ws, ep):
    check(ws.diff(ws.reference).empty, "the database is the one the gold actions leave")

task(name = "retail-exchange", prompt = "I received my order and want to exchange the keyboard and the thermostat.",
     tools = TOOLS, setup = _setup, verify = _verify, solution = _solve)
`
