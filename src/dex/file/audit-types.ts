/**
 * The parsed audit: what a VMC's EVA-DTS file says (6.1.1 section 2.5, data dictionary). Money is
 * in the currency's minor units as the file writes it (the decimal point is implied: ID401 places,
 * 2 by default); a field the machine left empty or did not send is null, never 0.
 */

/** A value and a count, as VA1, CA2, DA2, DB2, PA7 write them. */
export interface Figures {
  value: number | null;
  count: number | null;
}

/** Since initialisation (lifetime, never reset by a read) and since the last reset (the interval). */
export interface Totals {
  sinceInit: Figures;
  sinceReset: Figures;
}

export interface ProductDevice {
  /** PA702: CA cash, DA cashless 1, DB cashless 2, TA token... as written. */
  device: string;
  priceList: number | null;
  price: number | null;
  totals: Totals;
}

export interface Product {
  /** PA101: the selection (panel) number as the machine names it. */
  selection: string;
  price: number | null;
  /** PA103: the product's own identification, when the machine knows it. */
  productId: string | null;
  /** PA2: paid vends of this selection, all payment devices together. */
  paid: Totals | null;
  /** PA7: the same per payment device and price list. */
  byDevice: ProductDevice[];
}

export interface AuditEventRecord {
  /** EA1 (one occurrence, with its date) or EA2 (counts per event kind). */
  record: 'EA1' | 'EA2';
  id: string;
  date: string | null;
  time: string | null;
  durationMin: number | null;
  sinceReset: number | null;
  sinceInit: number | null;
  active: boolean | null;
}

export interface ParsedAudit {
  /** DXS01 and DXS03 of the block read. */
  sender: string | null;
  version: string | null;
  machine: {
    serial: string | null;
    model: string | null;
    build: string | null;
    location: string | null;
    asset: string | null;
  };
  /** ID401 (implied decimals, 2 when absent) and ID402/ID403. */
  currency: { decimals: number; numeric: string | null; alpha: string | null };
  /** VA1: all paid vends, every payment device. */
  paid: Totals | null;
  /** VA2 test vends and VA3 free vends. */
  test: Totals | null;
  free: Totals | null;
  cash: {
    /** CA2: vends paid in cash. */
    sales: Totals | null;
    /** CA3: money in (05 since init, 01 since reset), to the cash box (06/02), to the tubes (07/03), bills (08/04). */
    in: {
      sinceInit: number | null;
      sinceReset: number | null;
      toBoxSinceInit: number | null;
      toTubesSinceInit: number | null;
      billsSinceInit: number | null;
    } | null;
    /** CA4: change paid out (03 since init, 01 since reset) and manual dispense (04/02). */
    out: {
      sinceInit: number | null;
      sinceReset: number | null;
      manualSinceInit: number | null;
      manualSinceReset: number | null;
    } | null;
  };
  /** DA2 (cashless device #1) and DB2 (cashless device #2). */
  cashless1: Totals | null;
  cashless2: Totals | null;
  products: Product[];
  events: AuditEventRecord[];
  /** EA3: reads of this machine (09), of which with a reset (01), resets (10), this read's date and time. */
  reads: {
    total: number | null;
    withReset: number | null;
    resets: number | null;
    date: string | null;
    time: string | null;
  } | null;
  /** Segments not modelled above (and any repeats of single ones), exactly as written. */
  other: { line: number; text: string }[];
  /** Fields that should be numbers and were not: kept as null, said here. */
  warnings: string[];
}
