import sys
p = sys.argv[1] + '/mm/page_alloc.c'
t = open(p).read()
decl = '''static unsigned long diag_rmqueue_empty, diag_rmqueue_empty_zone, diag_rmqueue_empty_snap0;
static long diag_rmqueue_empty_free;
module_param(diag_rmqueue_empty, ulong, 0444);
module_param(diag_rmqueue_empty_zone, ulong, 0444);
module_param(diag_rmqueue_empty_snap0, ulong, 0444);
module_param(diag_rmqueue_empty_free, long, 0444);
'''
anchor = 'static unsigned long zlc_interval = HZ;\n'
assert anchor in t
t = t.replace(anchor, decl + anchor, 1)
old = '''			return page;
		} else {
			if (cond_accept_memory(zone, order, alloc_flags))
				goto try_this_zone;
'''
new = '''			return page;
		} else {
			diag_rmqueue_empty++;
			diag_rmqueue_empty_zone = zone_to_nid(zone) * 10 + zone_idx(zone);
			diag_rmqueue_empty_free = zone_page_state(zone, NR_FREE_PAGES);
			if (zone_page_state_snapshot(zone, NR_FREE_PAGES) <= 0)
				diag_rmqueue_empty_snap0++;
			if (cond_accept_memory(zone, order, alloc_flags))
				goto try_this_zone;
'''
assert t.count(old) == 1, t.count(old)
t = t.replace(old, new, 1)
open(p, 'w').write(t)
