//! Which polygons a query may cross, and what each area costs.

use crate::ids::{AreaId, CostVersion, FilterVersion};
use crate::mesh::{PolyFlags, TilePoly};

/// Area costs and exclusions, with versions so results can be checked at adoption.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryFilter {
    // Crate-visible so a saved crowd writes its filter table field by field.
    pub(crate) area_costs: [f32; AreaId::MAX as usize + 1],
    pub(crate) excluded_areas: u64,
    pub(crate) include_flags: u16,
    pub(crate) exclude_flags: u16,
    pub(crate) use_links: bool,
    pub(crate) version: FilterVersion,
    pub(crate) cost_version: CostVersion,
}

impl Default for QueryFilter {
    fn default() -> Self {
        QueryFilter {
            area_costs: [1.0; AreaId::MAX as usize + 1],
            excluded_areas: 1 << AreaId::UNWALKABLE.0,
            include_flags: u16::MAX,
            exclude_flags: PolyFlags::DISABLED,
            use_links: true,
            version: FilterVersion(1),
            cost_version: CostVersion(1),
        }
    }
}

impl QueryFilter {
    /// Every walkable area at cost 1, links allowed.
    pub fn new() -> Self {
        QueryFilter::default()
    }

    /// Sets an area's cost multiplier (finite, >= 1 keeps the A* heuristic admissible);
    /// bumps the cost version. Returns `false` (and changes nothing) for a bad value.
    pub fn set_area_cost(&mut self, area: AreaId, cost: f32) -> bool {
        if area.0 > AreaId::MAX || !(cost.is_finite() && cost >= 1.0) {
            return false;
        }
        self.area_costs[usize::from(area.0)] = cost;
        self.cost_version = CostVersion(self.cost_version.0 + 1);
        true
    }

    /// Excludes or re-includes an area; bumps the filter version.
    pub fn set_area_excluded(&mut self, area: AreaId, excluded: bool) {
        if area.0 > AreaId::MAX {
            return;
        }
        if excluded {
            self.excluded_areas |= 1 << area.0;
        } else {
            self.excluded_areas &= !(1 << area.0);
        }
        self.version = FilterVersion(self.version.0 + 1);
    }

    /// Allows or forbids off-mesh links; bumps the filter version.
    pub fn set_links_allowed(&mut self, allowed: bool) {
        self.use_links = allowed;
        self.version = FilterVersion(self.version.0 + 1);
    }

    /// Polygons must have at least one of these flags (default: any) and none of the
    /// excluded ones (default: [`PolyFlags::DISABLED`]); bumps the filter version.
    pub fn set_flags(&mut self, include: u16, exclude: u16) {
        self.include_flags = include;
        self.exclude_flags = exclude;
        self.version = FilterVersion(self.version.0 + 1);
    }

    /// Whether a polygon may be entered: its area is not excluded and its flags pass.
    #[inline]
    pub fn passes(&self, polygon: &TilePoly) -> bool {
        self.passes_area_flags(polygon.area, polygon.flags)
    }

    /// Whether a polygon of area `area` with flags `flags` may be entered (what
    /// [`QueryFilter::passes`] asks of a polygon record, for callers that carry the two
    /// apart, as the search graph's edges do).
    #[inline]
    pub fn passes_area_flags(&self, area: u8, flags: u16) -> bool {
        area <= AreaId::MAX
            && self.excluded_areas & (1 << area) == 0
            && flags & self.include_flags != 0
            && flags & self.exclude_flags == 0
    }

    /// Cost multiplier of an area.
    #[inline]
    pub fn cost(&self, area: u8) -> f32 {
        self.area_costs[usize::from(area.min(AreaId::MAX))]
    }

    /// Whether off-mesh links may be used.
    pub fn links_allowed(&self) -> bool {
        self.use_links
    }

    /// Version of the include/exclude rules.
    pub fn version(&self) -> FilterVersion {
        self.version
    }

    /// Version of the costs.
    pub fn cost_version(&self) -> CostVersion {
        self.cost_version
    }
}
