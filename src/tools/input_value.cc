// --input value parsing placeholder (being written).
