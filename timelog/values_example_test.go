package timelog_test

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

func ExampleLog_AppendValue() {
	db, err := kvstore.Open("", kvstore.Options{}) // in memory
	if err != nil {
		panic(err)
	}
	defer db.Close()
	events, err := timelog.Open(context.Background(), db, "events", timelog.Options{Values: true, Maintenance: timelog.Manual})
	if err != nil {
		panic(err)
	}
	defer events.Close()
	h, err := events.AppendValue(20, []byte("second"))
	if err != nil {
		panic(err)
	}
	if _, err := events.AppendValue(10, []byte("first")); err != nil {
		panic(err)
	}
	if err := events.Flush(context.Background()); err != nil {
		panic(err)
	}
	s, err := events.Snapshot()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for e, err := range s.AllValues() {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.Ts, string(e.Value))
	}
	v, _ := s.Value(h)
	fmt.Println(string(v))
	// Output:
	// 10 first
	// 20 second
	// second
}

func ExampleOpenObjects() {
	type reading struct {
		Sensor string
		Value  float64
	}
	db, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	objs, err := timelog.OpenObjects(context.Background(), db, "readings", timelog.Options{Maintenance: timelog.Manual},
		timelog.ObjectOptions[reading]{}) // JSON codec, 4,096 cached values
	if err != nil {
		panic(err)
	}
	defer objs.Close()
	for i, r := range []reading{{"a", 1.5}, {"b", 2.5}} {
		if _, err := objs.Append(int64(100*(i+1)), r); err != nil {
			panic(err)
		}
	}
	s, err := objs.Log().Snapshot()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for o, err := range objs.Range(s, 0, 1000) {
		if err != nil {
			panic(err)
		}
		fmt.Println(o.Ts, o.Value.Sensor, o.Value.Value)
	}
	// Output:
	// 100 a 1.5
	// 200 b 2.5
}
