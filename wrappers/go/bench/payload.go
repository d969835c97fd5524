package main

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
)

// The G2/G4 payload: the structure bench/python/payload.py builds (100 users
// in a page), filled by a seeded generator of Go's own (the same shape and
// about the same 23.5 KB as MessagePack, not the same random words).
type address struct {
	Street string `msgpack:"street"`
	City   string `msgpack:"city"`
	Zip    string `msgpack:"zip"`
}

type prefs struct {
	Theme string `msgpack:"theme"`
	Lang  string `msgpack:"lang"`
}

type benchUser struct {
	ID      int64    `msgpack:"id"`
	Name    string   `msgpack:"name"`
	Email   string   `msgpack:"email"`
	Active  bool     `msgpack:"active"`
	Score   float64  `msgpack:"score"`
	Tags    []string `msgpack:"tags"`
	Address address  `msgpack:"address"`
	Logins  []int64  `msgpack:"logins"`
	Bio     string   `msgpack:"bio"`
	Prefs   prefs    `msgpack:"prefs"`
}

type usersPage struct {
	Users []benchUser `msgpack:"users"`
	Count int         `msgpack:"count"`
	Page  int         `msgpack:"page"`
}

func usersPayload(n int) usersPage {
	rng := rand.New(rand.NewSource(1234))
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}
	word := func() string { return words[rng.Intn(len(words))] }
	title := func() string { w := word(); return strings.ToUpper(w[:1]) + w[1:] }
	p := usersPage{Count: n, Page: 1}
	for i := 0; i < n; i++ {
		bio := make([]string, 5)
		for j := range bio {
			bio[j] = word()
		}
		p.Users = append(p.Users, benchUser{
			ID:      int64(100000 + i),
			Name:    title() + " " + title(),
			Email:   fmt.Sprintf("user%d@example.com", i),
			Active:  rng.Float64() > 0.2,
			Score:   math.Round(rng.Float64()*100*1000) / 1000,
			Tags:    []string{word(), word(), word()},
			Address: address{Street: fmt.Sprintf("%d %s St", 1+rng.Intn(999), title()), City: title(), Zip: fmt.Sprint(10000 + rng.Intn(90000))},
			Logins:  []int64{1_600_000_000 + rng.Int63n(100_000_000), 1_600_000_000 + rng.Int63n(100_000_000), 1_600_000_000 + rng.Int63n(100_000_000)},
			Bio:     strings.Join(bio, " "),
			Prefs:   prefs{Theme: []string{"dark", "light"}[rng.Intn(2)], Lang: []string{"en", "de", "fr"}[rng.Intn(3)]},
		})
	}
	return p
}

// smallUser is G1's result: a small struct.
type smallUser struct {
	ID     int64  `msgpack:"id"`
	Name   string `msgpack:"name"`
	Email  string `msgpack:"email"`
	Active bool   `msgpack:"active"`
}
