z(){ for n in 0 1; do awk -v n=$n '$1=="Node" && $2==n"," {p=1; zn=$4} $1=="Node" && $2!=n"," {p=0} p && $1=="pages" && $2=="free" {printf "n%d.%s free %d ", n, zn, $3} p && $1=="min" {printf "min %d ", $2} p && $1=="low" {printf "low %d ", $2}' /proc/zoneinfo; done; echo; }
zonelist_cache_memhog -p 12 -t 2 -r 1 -m asis >/dev/null 2>&1
for i in 1 2 3; do z; zonelist_cache_memhog -p 12 -t 2 -r 1 -m asis -j 2>&1 | grep zlc-run | sed 's/.*"mib"/"mib"/' | cut -c1-200; done
z
