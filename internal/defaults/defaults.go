// Package defaults fills the settings a caller left unset: a struct of
// limits or options whose zero field means "the default".
package defaults

import "reflect"

// Positive returns v with every numeric field (integers, durations, floats)
// that is zero or negative replaced by def's. Other fields stay as they
// are. T must be a struct type.
func Positive[T any](v, def T) T {
	out := reflect.ValueOf(&v).Elem()
	d := reflect.ValueOf(def)
	for i := range out.NumField() {
		f := out.Field(i)
		if !f.CanSet() {
			continue
		}
		unset := false
		switch f.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			unset = f.Int() <= 0
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			unset = f.Uint() == 0
		case reflect.Float32, reflect.Float64:
			unset = f.Float() <= 0
		}
		if unset {
			f.Set(d.Field(i))
		}
	}
	return v
}
