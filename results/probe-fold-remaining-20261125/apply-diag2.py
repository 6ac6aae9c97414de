# Temporary counters for the probe (never in the series): where does the
# walk still find an empty zone that passed its check, with the fold in?
import sys
p = sys.argv[1] + '/mm/page_alloc.c'
t = open(p).read()
lnames = ['diag_l_counter', 'diag_l_snapshot', 'diag_l_mydelta', 'diag_l_buddy', 'diag_l_cpu',
          'diag_l_highatomic', 'diag_l_reserve', 'diag_l_wmark']
names = ['diag_empty_first', 'diag_empty_nocache', 'diag_empty_walk_off',
         'diag_fold', 'diag_fold_still_passes', 'diag_nofold_passes',
         'diag_marked_already', 'diag_empty_zone']
decl = ''.join(f'static unsigned long {n};\nmodule_param({n}, ulong, 0444);\n' for n in names)
decl += ''.join(f'static long {n};\nmodule_param({n}, long, 0444);\n' for n in lnames)
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
			if (!zlc)
				diag_empty_walk_off++;
			else if (zlc_nodes)
				diag_empty_first++;
			else
				diag_empty_nocache++;
			diag_empty_zone = zone_to_nid(zone) * 10 + zone_idx(zone);
			if (cond_accept_memory(zone, order, alloc_flags))
				goto try_this_zone;
'''
assert t.count(old) == 1, t.count(old)
t = t.replace(old, new, 1)
old = '''	if (test_bit(i, zlc->fullzones[highest_zoneidx]))
		return;
'''
new = '''	if (test_bit(i, zlc->fullzones[highest_zoneidx])) {
		diag_marked_already++;
		return;
	}
'''
assert t.count(old) == 1
t = t.replace(old, new, 1)
old = '''	if (full < 0 && zlc_count_own_takes(zone))
		full = zlc_full_order(zone, order, highest_zoneidx, alloc_flags,
				      &class);
'''
new = '''	if (full < 0 && zlc_count_own_takes(zone)) {
		diag_fold++;
		full = zlc_full_order(zone, order, highest_zoneidx, alloc_flags,
				      &class);
		if (full < 0)
			diag_fold_still_passes++;
	} else if (full < 0) {
		int o;

		diag_nofold_passes++;
		diag_l_counter = atomic_long_read(&zone->vm_stat[NR_FREE_PAGES]);
		diag_l_snapshot = zone_page_state_snapshot(zone, NR_FREE_PAGES);
		diag_l_mydelta = this_cpu_read(zone->per_cpu_zonestats->vm_stat_diff[NR_FREE_PAGES]);
		diag_l_buddy = 0;
		for (o = 0; o < NR_PAGE_ORDERS; o++)
			diag_l_buddy += data_race(zone->free_area[o].nr_free) << o;
		diag_l_cpu = raw_smp_processor_id();
		diag_l_highatomic = READ_ONCE(zone->nr_free_highatomic);
		diag_l_reserve = zone->lowmem_reserve[highest_zoneidx];
		diag_l_wmark = wmark_pages(zone, alloc_flags & ALLOC_WMARK_MASK);
	}
'''
assert t.count(old) == 1
t = t.replace(old, new, 1)
open(p, 'w').write(t)
