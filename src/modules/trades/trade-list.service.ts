import { inOrganizations } from '../../platform/database/tenancy';
import { QueryOrder } from '@mikro-orm/core';
import { TradeListTrade } from './trade-list-trade.entity';
import { TradeList } from './trade-list.entity';
import { NotFoundError } from '../../platform/errors/errors';
import { groupUnder } from '../../platform/database/batch';
import type { ServiceContext } from '../../platform/service-context';
import { uuidList } from '../../platform/database/uuid';

export interface TradeListView {
  id: string;
  name: string;
  /** Null for a public list. */
  organizationId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface TradeListTradeView {
  id: string;
  number: string;
  name: string;
  shortName: string;
}

export interface TradeListDetailView extends TradeListView {
  trades: TradeListTradeView[];
}

const listView = (l: TradeList): TradeListView => ({
  id: l.id,
  name: l.name,
  organizationId: l.organization?.id ?? null,
  createdAt: l.createdAt,
  updatedAt: l.updatedAt,
});

/** Trade lists the caller may use: the public ones and those of their Administrator organizations. */
export class TradeListService {
  constructor(private readonly sc: ServiceContext) {}

  private visible() {
    return { $or: [{ organization: null }, { organization: inOrganizations(this.sc.caller.adminOrganizationIds) }] };
  }

  /** #23: public lists first, then the organizations' own, each by name. */
  async list(): Promise<TradeListView[]> {
    const lists = await this.sc.em.find(TradeList, this.visible(), {
      orderBy: [{ organization: QueryOrder.ASC_NULLS_FIRST }, { name: QueryOrder.ASC }, { id: QueryOrder.ASC }],
    });
    return lists.map(listView);
  }

  /**
   * Trades of many lists in one statement, by list id, by number. Lists reach here only once visible
   * (`list`, `get`): trades carry no tenancy of their own.
   */
  async tradesByList(tradeListIds: readonly string[]): Promise<Map<string, TradeListTradeView[]>> {
    const ids = uuidList(tradeListIds);
    const rows = ids.length ? await this.sc.em.find(TradeListTrade, { tradeList: { $in: ids } }, { orderBy: { number: 'asc', id: 'asc' } }) : [];
    return groupUnder(ids, rows, (t) => t.tradeList.id, (t) => ({ id: t.id, number: t.number, name: t.name, shortName: t.shortName }));
  }

  /** #24: one visible list with its trades, in two statements. */
  async get(tradeListId: string): Promise<TradeListDetailView> {
    const list = await this.sc.em.findOne(TradeList, { id: tradeListId.toLowerCase(), ...this.visible() });
    if (!list) throw new NotFoundError('Trade list not found');
    const trades = await this.sc.em.find(TradeListTrade, { tradeList: list.id }, { orderBy: { number: 'asc', id: 'asc' } });
    return {
      ...listView(list),
      trades: trades.map((t) => ({ id: t.id, number: t.number, name: t.name, shortName: t.shortName })),
    };
  }
}
