
.
aPlaceholder*
dtype0*
shape:
.
bPlaceholder*
shape:*
dtype0

addAddab"¿