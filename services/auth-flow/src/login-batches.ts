import type { ServiceImpl } from '@connectrpc/connect';
import { AuthFlowService, type LoginBatchService } from '@gateway/contracts';
import { settleEach } from '@gateway/rpc';

const START_LOGIN = `${AuthFlowService.typeName}/${AuthFlowService.method.startLogin.name}`;
const EXCHANGE_HANDOFF = `${AuthFlowService.typeName}/${AuthFlowService.method.exchangeHandoff.name}`;

/**
 * LoginBatchService: the logins and exchanges of one call, each done by `authFlow` as its own
 * StartLogin or ExchangeHandoff call does it, concurrently, each answered on its own: its
 * answer or the error that call would fail with (an unexpected one logged by `onUnexpected`
 * under the method it stands for). An exchange takes this call's deadline along, as a lone
 * exchange takes its own: the batch carries the calls of one turn, made with one time-out.
 */
export function createLoginBatches(
  authFlow: Pick<ServiceImpl<typeof AuthFlowService>, 'startLogin' | 'exchangeHandoff'>,
  onUnexpected: (error: unknown, procedure: string) => void,
): ServiceImpl<typeof LoginBatchService> {
  return {
    async startLogins(request, context) {
      const logins = await settleEach(
        request.logins,
        async (login) => authFlow.startLogin(login, context),
        START_LOGIN,
        onUnexpected,
      );
      return { logins };
    },
    async exchangeHandoffs(request, context) {
      const exchanges = await settleEach(
        request.exchanges,
        async (exchange) => authFlow.exchangeHandoff(exchange, context),
        EXCHANGE_HANDOFF,
        onUnexpected,
      );
      return { exchanges };
    },
  };
}
