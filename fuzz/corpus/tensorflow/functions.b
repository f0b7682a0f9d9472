b
;
vPlaceholder*
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0

bPlaceholder*
dtype0

`
ifStatelessIfbv*
Tin
2*
else_branchR
f*
Tout
2*
then_branchR
f
0
kConst*
dtype0*
valueBj€x
0
uCustomif:0k*
s	:n*

t
2€
~

f
a
o"
pUnpacka*
T0*	
num+
sAddV2
p:output:0
p:output:1*
T0"

os:z:0*
_k
